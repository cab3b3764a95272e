"""Nothing unexplained is adopted (issue 44, item 5): a transaction found at a custody wallet's
nonce whose exact bytes the engine does not hold is a ``foreign_transaction`` row, pending an
administrator's decision (adopt for a named payout, or reject as a foreign outflow), with who
decided, when and what. Self-contained: one new table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Payout(Frozen):
    class Meta:
        table_name = "payout"


class ForeignTransaction(Frozen):
    chain_id = peewee.CharField(max_length=32)
    wallet = peewee.CharField(max_length=42)
    role = peewee.CharField(max_length=16)
    nonce = peewee.BigIntegerField()
    tx_hash = peewee.CharField(max_length=66)
    block_number = peewee.BigIntegerField()
    raw = peewee.TextField()
    status = peewee.CharField(max_length=16)
    found_at = UTCDateTimeField()
    decided_at = UTCDateTimeField(null=True)
    decided_by = peewee.CharField(max_length=200, null=True)
    payout = peewee.ForeignKeyField(Payout, null=True, on_delete="RESTRICT")
    note = peewee.TextField(null=True)

    class Meta:
        table_name = "foreign_transaction"
        indexes = ((("chain_id", "tx_hash"), True), (("chain_id", "wallet", "status"), False))


def up(db: peewee.Database) -> None:
    create_tables(db, ForeignTransaction)
