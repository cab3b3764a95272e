"""Payouts with their transitions and attempts, and the signature replay cache."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables, forbid_changes


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)
    created_at = UTCDateTimeField()


class Payout(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    payout_id = peewee.CharField(max_length=64)
    idempotency_key = peewee.CharField(max_length=128)
    instruction_hash = peewee.CharField(max_length=64)
    asset = peewee.CharField(max_length=16)
    chain_id = peewee.CharField(max_length=32)
    amount_minor = peewee.CharField(max_length=39)
    destination = peewee.CharField(max_length=256)
    status = peewee.CharField(max_length=16)
    tx_hash = peewee.CharField(max_length=130, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    signed_payload_digest = peewee.CharField(max_length=130, null=True)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "payout"
        indexes = (
            (("operator", "idempotency_key"), True),
            (("operator", "payout_id"), True),
            (("operator", "status", "id"), False),
        )


class PayoutTransition(Frozen):
    payout = peewee.ForeignKeyField(Payout, on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField()

    class Meta:
        table_name = "payout_transition"


class PayoutAttempt(Frozen):
    payout = peewee.ForeignKeyField(Payout, on_delete="RESTRICT")
    outcome = peewee.CharField(max_length=32)
    tx_hash = peewee.CharField(max_length=130, null=True)
    occurred_at = UTCDateTimeField()

    class Meta:
        table_name = "payout_attempt"


class SeenSignature(Frozen):
    signature = peewee.CharField(max_length=64, primary_key=True)
    expires_at = peewee.BigIntegerField(index=True)

    class Meta:
        table_name = "seen_signature"


def up(db: peewee.Database) -> None:
    create_tables(db, Payout, PayoutTransition, PayoutAttempt, SeenSignature)
    forbid_changes(db, "payout_transition")
