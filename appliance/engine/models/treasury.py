"""The treasury: reconciliation findings, wallet balances, the jobs' runs, and sweeps."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.deposits import DepositAddress
from appliance.engine.models.transactions import Broadcast


class TreasuryFinding(BaseModel):
    """A finding of the reconciliation (appliance/engine/treasury/reconcile.py). Findings read from
    the current state are replaced by every run; a ``sticky`` one (an unknown outflow: the chain
    keeps the nonce, the money is gone) stays until an administrator acknowledges it, or until a
    later run finds the nonce used by the engine's own transaction (a node that lagged): then the
    reconciler resolves it, with the reason, and the row is kept."""

    key = peewee.CharField(max_length=255, unique=True)
    kind = peewee.CharField(max_length=32)
    critical = peewee.BooleanField()
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    expected_minor = peewee.CharField(max_length=90)
    actual_minor = peewee.CharField(max_length=90)
    detail = peewee.TextField()
    sticky = peewee.BooleanField(default=False)
    first_seen_at = UTCDateTimeField(default=now)
    last_seen_at = UTCDateTimeField(default=now)
    acknowledged_at = UTCDateTimeField(null=True)
    acknowledged_by = peewee.CharField(max_length=200, null=True)
    resolved_at = UTCDateTimeField(null=True)
    resolution = peewee.TextField(null=True)

    class Meta:
        table_name = "treasury_finding"


class TreasuryBalance(BaseModel):
    """A custody wallet's balance of one asset as the last reconciliation read it (for /metrics)."""

    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    role = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    on_chain_minor = peewee.CharField(max_length=90)
    expected_minor = peewee.CharField(max_length=90)
    low_balance = peewee.BooleanField(default=False)
    checked_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "treasury_balance"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "role", "address")


class TreasuryRun(BaseModel):
    """The reconcile job's single-holder lease, its last run and when it is due again."""

    name = peewee.CharField(max_length=32, primary_key=True)
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)
    checked_at = UTCDateTimeField(null=True)
    next_run_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)

    class Meta:
        table_name = "treasury_run"


class Sweep(BaseModel):
    """One sweep of one asset from a deposit address into the payout wallet (appliance/engine/
    sweeps/). ``status``: skipped (below the minimum: nothing moved), topping_up (the fee wallet's
    gas top-up of the address is in flight), signed, sent, completed, failed. Deposits of the
    address and asset confirmed before ``planned_at`` are covered by it. ``topup`` and
    ``broadcast`` are the two nonce reservations (fee wallet, deposit address)."""

    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    deposit_address = peewee.ForeignKeyField(DepositAddress, on_delete="RESTRICT")
    address = peewee.CharField(max_length=42)
    status = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=90, null=True)  # what the payload in force moves
    fee_minor = peewee.CharField(max_length=90, null=True)  # the sweep's network fee, once mined
    topup_minor = peewee.CharField(max_length=90, null=True)
    topup = peewee.ForeignKeyField(Broadcast, null=True, unique=True, on_delete="RESTRICT", backref="+")
    broadcast = peewee.ForeignKeyField(
        Broadcast, null=True, unique=True, on_delete="RESTRICT", backref="sweeps"
    )
    tx_hash = peewee.CharField(max_length=66, null=True)
    reason = peewee.CharField(max_length=500, null=True)
    planned_at = UTCDateTimeField()
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "sweep"


class TreasuryFlowCursor(BaseModel):
    """Per chain: the next block whose transfers the reconciler reads for the custody wallets'
    flows (treasury/flows.py; null: none read yet), and the broadcast transition from which the
    sweeps' final movements are folded in (treasury/movements.py)."""

    chain_id = peewee.CharField(max_length=32, primary_key=True)
    next_block = peewee.BigIntegerField(null=True)
    movements_from = peewee.BigIntegerField(default=0)
    updated_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "treasury_flow_cursor"


class TreasuryFlowCheckpoint(BaseModel):
    """A custody wallet's balance of an asset at the block the flows were counted to."""

    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    asset_code = peewee.CharField(max_length=16)
    block = peewee.BigIntegerField()
    balance_minor = peewee.CharField(max_length=90)

    class Meta:
        table_name = "treasury_flow_checkpoint"
        primary_key = peewee.CompositeKey("chain_id", "address", "asset_code")


class TreasuryAllowance(BaseModel):
    """A custody wallet's token allowance to a spender, seen in an Approval log (read again with
    allowance() on each run while it is not zero)."""

    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    owner = peewee.CharField(max_length=42)
    spender = peewee.CharField(max_length=42)
    tx_hash = peewee.CharField(max_length=66)
    block = peewee.BigIntegerField()

    class Meta:
        table_name = "treasury_allowance"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "owner", "spender")


class TreasuryNonceCursor(BaseModel):
    """Per custody address: every used nonce below ``checked_below`` was accounted for (an engine
    transaction, or a finding that stays)."""

    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    checked_below = peewee.BigIntegerField()

    class Meta:
        table_name = "treasury_nonce_cursor"
        primary_key = peewee.CompositeKey("chain_id", "address")


class TreasuryMovement(BaseModel):
    """The final sweeps' and top-ups' change to a deposit address's balance of an asset."""

    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    asset_code = peewee.CharField(max_length=16)
    change_minor = peewee.CharField(max_length=90)

    class Meta:
        table_name = "treasury_movement"
        primary_key = peewee.CompositeKey("chain_id", "address", "asset_code")
