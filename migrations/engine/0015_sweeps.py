"""Sweeps of deposit addresses into the payout wallet (issue 31 item 2): one row per sweep of one
asset from one deposit address, tying together the gas top-up from the fee wallet and the sweep's
own transaction (both nonce reservations in ``broadcast``, signed and stored before they are sent).
Self-contained: one new table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class DepositAddress(Frozen):
    class Meta:
        table_name = "deposit_address"


class Broadcast(Frozen):
    class Meta:
        table_name = "broadcast"


class Sweep(Frozen):
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    deposit_address = peewee.ForeignKeyField(DepositAddress, on_delete="RESTRICT")
    address = peewee.CharField(max_length=42)
    status = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=90, null=True)
    fee_minor = peewee.CharField(max_length=90, null=True)
    topup_minor = peewee.CharField(max_length=90, null=True)
    topup = peewee.ForeignKeyField(Broadcast, null=True, unique=True, on_delete="RESTRICT")
    broadcast = peewee.ForeignKeyField(Broadcast, null=True, unique=True, on_delete="RESTRICT")
    tx_hash = peewee.CharField(max_length=66, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    planned_at = UTCDateTimeField()
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "sweep"
        indexes = (
            (("chain_id", "address", "asset_code"), False),
            (("status",), False),
        )


def up(db: peewee.Database) -> None:
    create_tables(db, Sweep)
