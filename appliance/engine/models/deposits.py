"""Deposits: custody accounts, deposit addresses, the transfers to them, and the watcher's cursor
and scanned blocks per chain."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.operators import Operator


class CustodyAccount(BaseModel):
    """An operator's BIP44 account number (deposit addresses) and its next address index."""

    operator = peewee.ForeignKeyField(Operator, unique=True, on_delete="RESTRICT")
    account = peewee.IntegerField(unique=True)
    next_index = peewee.BigIntegerField(default=0)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "custody_account"


class DepositAddress(BaseModel):
    """An operator's deposit address on one chain: m/44'/60'/(1 + custody account)'/0/derivation_index."""

    address_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    account_ref = peewee.CharField(max_length=128)
    address = peewee.CharField(max_length=42)
    custody_account = peewee.IntegerField()
    derivation_index = peewee.BigIntegerField()
    watch_from = peewee.BigIntegerField()  # the chain's head when it was created: deposits start there
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "deposit_address"


class Deposit(BaseModel):
    """One transfer to a deposit address, recorded once: (chain_id, tx_hash, output_index), the
    output index being the log index of an ERC20 Transfer and 0 for a native transfer."""

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
    status = peewee.CharField(max_length=16)  # PENDING, CONFIRMED, RETRACTED
    detected_at = UTCDateTimeField(default=now)
    confirmed_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "deposit"


class ChainCursor(BaseModel):
    """The deposit watcher's position on one chain, and its single-holder lease."""

    chain_id = peewee.CharField(max_length=32, primary_key=True)
    next_block = peewee.BigIntegerField()
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "chain_cursor"


class ScannedBlock(BaseModel):
    """The hash of each recently scanned block: a different hash at that height now is a reorg."""

    chain_id = peewee.CharField(max_length=32)
    number = peewee.BigIntegerField()
    hash = peewee.CharField(max_length=66)

    class Meta:
        table_name = "scanned_block"
        primary_key = peewee.CompositeKey("chain_id", "number")
