"""Operators' Ed25519 keys for payout instructions (issue 43): an operator that registers one
(`appliance operator add-signing-key`) signs every payout's canonical instruction, the engine
stores the signature with the payout, and the signer refuses a payout transaction without a valid
one. operator_signing_key keeps every key with its revocation; one unrevoked key per operator at
most (a partial unique index). The signer keeps its own copy of the key (signer.db): this table
serves the API's check only."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class OperatorSigningKey(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="CASCADE")
    public_key = peewee.CharField(max_length=64)  # 32 bytes as 64 lower-case hex digits
    created_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "operator_signing_key"


def up(db: peewee.Database) -> None:
    create_tables(db, OperatorSigningKey)
    db.execute_sql(
        "CREATE UNIQUE INDEX operator_signing_key_in_force ON operator_signing_key (operator_id) "
        "WHERE revoked_at IS NULL"
    )
    db.execute_sql("ALTER TABLE payout ADD COLUMN instruction_signature VARCHAR(128) NULL")
