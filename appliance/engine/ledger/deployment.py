"""The deployment's own ledger account per asset (docs/engine-treasury.md, "Solvency").

What custody spends that belongs to no operator: the network fees of sweeps (a deposit address
pays them out of the gas the fee wallet topped it up with, or out of a native deposit), of the
fee wallet's gas top-ups (of deposit addresses and of the payout wallet) and other losses
recorded here. Every journal is two legs summing to zero, written in the transaction of the
state change that causes it, once per cause (``ref`` is unique per account: a sweep closed twice
by two holders posts once):

  costs     what the deployment spent (positive)
  custody   the counter-account: what left custody for it (negative)

Solvency (treasury/solvency.py) shows ``costs`` per asset beside what operators are owed and what
custody holds: the part of a gap between them that the deployment itself spent.
"""

from __future__ import annotations

import secrets

import peewee

from appliance.common import clock
from appliance.common.db import UTCDateTimeField
from appliance.engine.models import BaseModel

COSTS, CUSTODY = "costs", "custody"
SWEEP_FEE = "sweep_fee"
TOPUP_FEE = "gas_topup_fee"  # the network fee of the payout wallet's gas top-ups


class DeploymentLedgerEntry(BaseModel):
    journal = peewee.CharField(max_length=40)
    kind = peewee.CharField(max_length=32)
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=90)
    ref = peewee.CharField(max_length=80)
    memo = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=clock.now)

    class Meta:
        table_name = "deployment_ledger_entry"


class DeploymentLedgerAccount(BaseModel):
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    balance_minor = peewee.CharField(max_length=90)
    updated_at = UTCDateTimeField(default=clock.now)

    class Meta:
        table_name = "deployment_ledger_account"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "account")


def post_cost(
    kind: str, chain_id: str, asset_code: str, amount: int, *, ref: str, memo: str | None = None
) -> bool:
    """A cost of the deployment (inside the caller's write transaction); False when ``ref`` was
    posted before (nothing written)."""
    if amount == 0:
        return False
    exists = DeploymentLedgerEntry.select().where(
        (DeploymentLedgerEntry.ref == ref) & (DeploymentLedgerEntry.account == COSTS)
    )
    if exists.exists():
        return False
    journal = "djr_" + secrets.token_hex(12)
    moment = clock.now()
    for account, leg in ((COSTS, amount), (CUSTODY, -amount)):
        DeploymentLedgerAccount.insert(
            chain_id=chain_id, asset_code=asset_code, account=account, balance_minor="0", updated_at=moment
        ).on_conflict_ignore().execute()
        row = DeploymentLedgerAccount.get(
            (DeploymentLedgerAccount.chain_id == chain_id)
            & (DeploymentLedgerAccount.asset_code == asset_code)
            & (DeploymentLedgerAccount.account == account)
        )
        DeploymentLedgerAccount.update(
            balance_minor=str(int(row.balance_minor) + leg), updated_at=moment
        ).where(
            (DeploymentLedgerAccount.chain_id == chain_id)
            & (DeploymentLedgerAccount.asset_code == asset_code)
            & (DeploymentLedgerAccount.account == account)
        ).execute()
        DeploymentLedgerEntry.create(
            journal=journal, kind=kind, chain_id=chain_id, asset_code=asset_code, account=account,
            amount_minor=str(leg), ref=ref[:80], memo=memo, created_at=moment,
        )  # fmt: skip
    return True


def costs() -> dict[tuple[str, str], int]:
    """(chain id, asset code) → the deployment's costs so far."""
    return {
        (row.chain_id, row.asset_code): int(row.balance_minor)
        for row in DeploymentLedgerAccount.select().where(DeploymentLedgerAccount.account == COSTS)
    }
