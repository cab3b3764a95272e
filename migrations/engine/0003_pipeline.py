"""The payout pipeline: leases on payouts, wallets with their nonce counters, broadcasts (one
nonce reservation each) and every signed payload of a broadcast, and custody accounts."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables, forbid_changes


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class Payout(Frozen):
    class Meta:
        table_name = "payout"


class Wallet(Frozen):
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    next_nonce = peewee.BigIntegerField(default=0)

    class Meta:
        table_name = "wallet"
        indexes = ((("chain_id", "address"), True),)


class Broadcast(Frozen):
    payout = peewee.ForeignKeyField(Payout, null=True, unique=True, on_delete="RESTRICT")
    purpose = peewee.CharField(max_length=16)
    chain_id = peewee.CharField(max_length=32)
    wallet = peewee.CharField(max_length=42)
    nonce = peewee.BigIntegerField()
    raw = peewee.TextField()
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    tx_hash = peewee.CharField(max_length=66)
    max_fee_per_gas = peewee.CharField(max_length=78)
    max_priority_fee_per_gas = peewee.CharField(max_length=78)
    gas_limit = peewee.BigIntegerField()
    status = peewee.CharField(max_length=16, index=True)
    mined_tx_hash = peewee.CharField(max_length=66, null=True)
    mined_block = peewee.BigIntegerField(null=True)
    mined_block_hash = peewee.CharField(max_length=66, null=True)
    fee_minor = peewee.CharField(max_length=78, null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "broadcast"
        indexes = ((("chain_id", "wallet", "nonce"), True),)


class SignedPayload(Frozen):
    broadcast = peewee.ForeignKeyField(Broadcast, on_delete="RESTRICT")
    tx_hash = peewee.CharField(max_length=66, index=True)
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    raw = peewee.TextField()
    max_fee_per_gas = peewee.CharField(max_length=78)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "signed_payload"


class CustodyAccount(Frozen):
    operator = peewee.ForeignKeyField(Operator, unique=True, on_delete="RESTRICT")
    account = peewee.IntegerField(unique=True)
    next_index = peewee.BigIntegerField(default=0)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "custody_account"


def up(db: peewee.Database) -> None:
    for column, kind in (
        ("lease_until", "TIMESTAMP NULL"),
        ("next_attempt_at", "TIMESTAMP NULL"),
        ("work_attempts", "INTEGER NOT NULL DEFAULT 0"),
        ("fee_minor", "VARCHAR(78) NULL"),
    ):
        db.execute_sql(f"ALTER TABLE payout ADD COLUMN {column} {kind}")
    # The worker's scan across operators: unfinished payouts in due order.
    db.execute_sql("CREATE INDEX payout_due ON payout (status, next_attempt_at)")
    create_tables(db, Wallet, Broadcast, SignedPayload, CustodyAccount)
    forbid_changes(db, "signed_payload")
