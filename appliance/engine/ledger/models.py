"""Ledger and control tables (created by migrations/engine/0012_operator_ledger.py). Kept beside
the ledger rather than in engine/models/ so that the area stays self-contained."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models import BaseModel, Operator, Payout


class LedgerEntry(BaseModel):
    """One leg of a journal; the legs of a journal sum to zero. Append-only in the database.
    ``amount_minor`` is a signed decimal string of minor units (sums exceed every integer column)."""

    journal = peewee.CharField(max_length=40)
    kind = peewee.CharField(max_length=32)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=80)
    ref = peewee.CharField(max_length=80, null=True)
    memo = peewee.CharField(max_length=500, null=True)
    actor = peewee.CharField(max_length=200, null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "ledger_entry"


class LedgerAccount(BaseModel):
    """An account's running balance (the sum of its entries), the row a posting locks."""

    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    balance_minor = peewee.CharField(max_length=80)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "ledger_account"


class OperatorControl(BaseModel):
    operator = peewee.ForeignKeyField(Operator, primary_key=True, on_delete="RESTRICT")
    ledger_mode = peewee.CharField(max_length=16)  # unlimited | prefunded
    paused = peewee.BooleanField()
    paused_by = peewee.CharField(max_length=200, null=True)
    paused_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "operator_control"


class OperatorLimit(BaseModel):
    """An operator's limits for one asset (minor units as decimal strings; null: no limit)."""

    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    max_payout_minor = peewee.CharField(max_length=80, null=True)
    daily_volume_minor = peewee.CharField(max_length=80, null=True)
    approval_above_minor = peewee.CharField(max_length=80, null=True)
    # The rolling approval threshold (migration 0016): once the operator's payouts of the asset
    # submitted within the window pass it, each further one waits for approval.
    approval_rolling_minor = peewee.CharField(max_length=80, null=True)
    approval_window_hours = peewee.IntegerField(null=True)  # null: 24
    # The most an ``unlimited`` operator may pay out beyond what it was credited (migration 0022).
    exposure_ceiling_minor = peewee.CharField(max_length=80, null=True)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "operator_limit"


class OperatorDestination(BaseModel):
    """An allowed payout destination; an operator with any on a chain may pay only to those there."""

    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)  # EIP-55
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "operator_destination"


class PayoutApprovalWindow(BaseModel):
    """A payout of an operator with a rolling approval threshold, as it was admitted: its amount,
    the running total of the operator's payouts of the asset entered so far (a window's sum is the
    difference of two running totals), the window's sum with it, and whether that passed the
    threshold (then it waits for an administrator's approval). Written in the payout's admission
    transaction, only for operators with the threshold: the others' admissions write nothing more
    (migration 0016)."""

    payout = peewee.ForeignKeyField(Payout, unique=True, on_delete="RESTRICT")
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=39)
    cumulative_minor = peewee.CharField(max_length=80)
    window_sum_minor = peewee.CharField(max_length=80)
    approval_due = peewee.BooleanField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_approval_window"


class PayoutApproval(BaseModel):
    """An administrator's decision on a payout above its approval threshold (append-only)."""

    payout = peewee.ForeignKeyField(Payout, unique=True, on_delete="RESTRICT")
    decision = peewee.CharField(max_length=16)  # approved | rejected
    decided_by = peewee.CharField(max_length=200)
    decided_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "payout_approval"
