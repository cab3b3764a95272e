"""What the engine signs and sends: custody wallets with their nonces, one broadcast per nonce
reservation, and every payload ever signed at it."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.payouts import Payout


class Wallet(BaseModel):
    """A custody wallet on one chain with the next nonce the engine will reserve. A wallet with a
    ``fence_reason`` signs nothing (the chain used a nonce the engine cannot account for);
    ``verified_block`` is a head at which the chain's nonce was known to match the engine's;
    ``scan_block`` is the next block of the wallet's history to read while a nonce gap is being
    matched against the chain (NULL: no scan under way)."""

    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    next_nonce = peewee.BigIntegerField(default=0)
    fence_reason = peewee.TextField(null=True)
    verified_block = peewee.BigIntegerField(null=True)
    scan_block = peewee.BigIntegerField(null=True)

    class Meta:
        table_name = "wallet"


class Broadcast(BaseModel):
    """One nonce reservation (wallet, nonce): the transaction that pays one payout (or tops up the
    payout wallet's gas from the fee wallet). ``raw`` is the payload in force; every payload ever
    signed at this nonce is a SignedPayload, because any of them may still land."""

    payout = peewee.ForeignKeyField(
        Payout, null=True, unique=True, backref="broadcasts", on_delete="RESTRICT"
    )
    purpose = peewee.CharField(max_length=16)  # payout | gas_topup | sweep | sweep_topup
    chain_id = peewee.CharField(max_length=32)
    wallet = peewee.CharField(max_length=42)
    nonce = peewee.BigIntegerField()
    raw = peewee.TextField()
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    tx_hash = peewee.CharField(max_length=66)
    max_fee_per_gas = peewee.CharField(max_length=78)
    max_priority_fee_per_gas = peewee.CharField(max_length=78)
    gas_limit = peewee.BigIntegerField()
    status = peewee.CharField(max_length=16)  # signed | sent | mined | final: outgoing.state
    mined_tx_hash = peewee.CharField(max_length=66, null=True)
    mined_block = peewee.BigIntegerField(null=True)
    mined_block_hash = peewee.CharField(max_length=66, null=True)
    fee_minor = peewee.CharField(max_length=78, null=True)
    signed_block = peewee.BigIntegerField(null=True)  # the head when it was signed (or found)
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "broadcast"


class BroadcastTransition(BaseModel):
    """One move of a broadcast's status (outgoing.state.transition), written with the move."""

    broadcast = peewee.ForeignKeyField(Broadcast, backref="transitions", on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "broadcast_transition"


class SignedPayload(BaseModel):
    broadcast = peewee.ForeignKeyField(Broadcast, backref="payloads", on_delete="RESTRICT")
    tx_hash = peewee.CharField(max_length=66)
    digest = peewee.CharField(max_length=80)  # "sha256:" and 64 hex digits
    raw = peewee.TextField()
    max_fee_per_gas = peewee.CharField(max_length=78)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "signed_payload"


class ForeignTransaction(BaseModel):
    """A transaction found on chain at a custody wallet's nonce whose exact bytes the engine does
    not hold (outgoing.fencing): never taken as the engine's own by itself. The wallet stays
    fenced while one is ``pending``; an administrator decides (`appliance payout adopt` or
    `appliance payout reject-foreign`), and the row keeps who decided, when and what."""

    chain_id = peewee.CharField(max_length=32)
    wallet = peewee.CharField(max_length=42)
    role = peewee.CharField(max_length=16)  # payout | fee | deposit
    nonce = peewee.BigIntegerField()
    tx_hash = peewee.CharField(max_length=66)
    block_number = peewee.BigIntegerField()
    raw = peewee.TextField()  # the signed bytes as the chain holds them (hex)
    status = peewee.CharField(max_length=16)  # pending | adopted | rejected
    found_at = UTCDateTimeField(default=now)
    decided_at = UTCDateTimeField(null=True)
    decided_by = peewee.CharField(max_length=200, null=True)  # the OS user (or --by)
    payout = peewee.ForeignKeyField(Payout, null=True, on_delete="RESTRICT")  # adopted for
    note = peewee.TextField(null=True)

    class Meta:
        table_name = "foreign_transaction"
        indexes = ((("chain_id", "tx_hash"), True), (("chain_id", "wallet", "status"), False))
