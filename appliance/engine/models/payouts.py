"""Payouts, their transitions and attempts, and the request signatures seen (replay guard)."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.operators import Operator


class Payout(BaseModel):
    """One payout instruction of one operator; the pipeline drives ``status`` through
    appliance.engine.payouts.state.transition, never directly."""

    # No index of its own: the unique (operator, idempotency_key) index serves lookups by operator.
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT", index=False)
    payout_id = peewee.CharField(max_length=64)
    idempotency_key = peewee.CharField(max_length=128)
    instruction_hash = peewee.CharField(max_length=64)
    asset = peewee.CharField(max_length=16)
    chain_id = peewee.CharField(max_length=32)
    amount_minor = peewee.CharField(max_length=39)  # decimal string of minor units, never a float
    destination = peewee.CharField(max_length=256)
    status = peewee.CharField(max_length=16)
    tx_hash = peewee.CharField(max_length=130, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    # Broadcast reservation: the digest of the signed transaction, fixed before any broadcast so
    # that a retry after a crash re-sends the same transaction instead of signing a new one.
    signed_payload_digest = peewee.CharField(max_length=130, null=True)
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)
    # The pipeline's work lease (appliance.common.jobs) and the gas cost once mined, in the fee asset.
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    next_attempt_at = UTCDateTimeField(null=True)
    work_attempts = peewee.IntegerField(default=0)
    fee_minor = peewee.CharField(max_length=78, null=True)
    # Once final and paid: what reached the destination and what left the payout wallet (a
    # fee-on-transfer token delivers less: COMPLETED_SHORT), as decimal strings.
    delivered_minor = peewee.CharField(max_length=78, null=True)
    debited_minor = peewee.CharField(max_length=78, null=True)
    # The operator's Ed25519 signature over the canonical instruction (128 hex digits), as submitted
    # in instructionSignature; required while the operator has a signing key (migrations 0019).
    instruction_signature = peewee.CharField(max_length=128, null=True)

    class Meta:
        table_name = "payout"


class PayoutTransition(BaseModel):
    payout = peewee.ForeignKeyField(Payout, backref="transitions", on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_transition"


class PayoutAttempt(BaseModel):
    payout = peewee.ForeignKeyField(Payout, backref="attempts", on_delete="RESTRICT")
    outcome = peewee.CharField(max_length=32)
    tx_hash = peewee.CharField(max_length=130, null=True)
    occurred_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_attempt"


class SeenSignature(BaseModel):
    signature = peewee.CharField(max_length=64, primary_key=True)
    expires_at = peewee.BigIntegerField()

    class Meta:
        table_name = "seen_signature"
