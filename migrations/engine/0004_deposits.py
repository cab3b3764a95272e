"""Deposit addresses (derived from custody, never supplied), the deposits seen on chain, the chain
watcher's cursor and the block hashes it scanned (to see reorgs), and the webhook outbox's events."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class DepositAddress(Frozen):
    address_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    account_ref = peewee.CharField(max_length=128)
    address = peewee.CharField(max_length=42)
    custody_account = peewee.IntegerField()
    derivation_index = peewee.BigIntegerField()
    watch_from = peewee.BigIntegerField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "deposit_address"
        indexes = (
            (("operator", "chain_id", "account_ref"), True),
            (("chain_id", "address"), True),
        )


class Deposit(Frozen):
    transfer_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    address = peewee.ForeignKeyField(DepositAddress, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    tx_hash = peewee.CharField(max_length=66)
    output_index = peewee.IntegerField()
    asset_code = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=78)
    block_height = peewee.BigIntegerField()
    block_hash = peewee.CharField(max_length=66)
    status = peewee.CharField(max_length=16)
    detected_at = UTCDateTimeField()
    confirmed_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "deposit"
        indexes = (
            (("chain_id", "tx_hash", "output_index"), True),
            (("chain_id", "status", "block_height"), False),
        )


class ChainCursor(Frozen):
    chain_id = peewee.CharField(max_length=32, primary_key=True)
    next_block = peewee.BigIntegerField()
    holder = peewee.CharField(max_length=64, null=True)
    lease_until = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "chain_cursor"


class ScannedBlock(Frozen):
    chain_id = peewee.CharField(max_length=32)
    number = peewee.BigIntegerField()
    hash = peewee.CharField(max_length=66)

    class Meta:
        table_name = "scanned_block"
        primary_key = peewee.CompositeKey("chain_id", "number")


class WebhookEvent(Frozen):
    event_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    payload = peewee.TextField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_event"


def up(db: peewee.Database) -> None:
    create_tables(db, DepositAddress, Deposit, ChainCursor, ScannedBlock, WebhookEvent)
