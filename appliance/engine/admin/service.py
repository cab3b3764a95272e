"""What the administrator's console shows and does, in the terms of the engine's own services:
positions and findings from treasury/, approvals and controls from ledger/, sweeps from sweeps/,
the audit log from audit.py. Every act is recorded in the audit log as the console's."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.amounts import in_units
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, NotFound
from appliance.engine import audit
from appliance.engine.auth.operators import list_operators
from appliance.engine.chain.registry import Chains
from appliance.engine.db import database
from appliance.engine.ledger import controls as ledger_controls
from appliance.engine.ledger import service as ledger
from appliance.engine.models import Payout, TreasuryFinding
from appliance.engine.treasury import reconcile

ACTOR = "console"
# The operator's limits as the console words them (ledger/service.py controls()).
LIMIT_WORDS = (
    ("maxPayoutMinor", "at most per payout"),
    ("dailyVolumeMinor", "at most per 24 h"),
    ("approvalAboveMinor", "approval above"),
    ("approvalRollingMinor", "approval above, rolling"),
    ("exposureCeilingMinor", "exposure at most"),
)
AWAITING_LIMIT = 200


def _units(chains: Chains, chain_id: str, code: str, minor: Any) -> str:
    asset = chains.find(chain_id, code)
    return in_units(minor, asset.decimals if asset else 0, code)


def treasury(chains: Chains, custody: Any) -> dict[str, Any]:
    """Every custody wallet's balance per asset, on chain and expected, read now."""
    from appliance.engine.treasury.positions import all_positions, positions_body

    body = positions_body(all_positions(chains, custody))
    for row in body["positions"]:
        row["onChain"] = _units(chains, row["chainId"], row["assetCode"], row["onChainMinor"])
        row["expected"] = _units(chains, row["chainId"], row["assetCode"], row["expectedMinor"])
    # Solvency is a reconciliation's: run one now (it stores its findings as the job's would).
    body["solvency"] = reconcile.reconcile(chains, custody)["solvency"]
    for row in body["solvency"]:
        for name in ("owed", "inFlight", "held", "shortfall", "deploymentCosts"):
            row[name] = _units(chains, row["chainId"], row["assetCode"], row[f"{name}Minor"])
    return body


def findings(chains: Chains) -> list[dict[str, Any]]:
    rows = []
    for row in reconcile.current_findings():
        body = reconcile.finding_body(row)
        body.update(
            id=str(row.id),
            critical=bool(row.critical),
            sticky=bool(row.sticky),
            firstSeenAt=clock.iso(row.first_seen_at),
            expected=_units(chains, row.chain_id, row.asset_code, row.expected_minor)
            if row.asset_code
            else row.expected_minor,
            actual=_units(chains, row.chain_id, row.asset_code, row.actual_minor)
            if row.asset_code
            else row.actual_minor,
        )
        rows.append(body)
    return rows


def acknowledge_finding(finding_id: int, who: str) -> None:
    """An administrator looked at a finding that stays until acknowledged (an unknown outflow)."""
    with write_transaction(database):
        row = TreasuryFinding.get_or_none((TreasuryFinding.id == finding_id) & reconcile.is_open())
        if row is None:
            raise NotFound("No such open finding.")
        if not row.sticky:
            raise Conflict("This finding clears itself when the chain explains it; nothing to acknowledge.")
        TreasuryFinding.update(acknowledged_at=clock.now(), acknowledged_by=who[:200]).where(
            TreasuryFinding.id == row.id
        ).execute()
        audit.record(
            "finding.acknowledged",
            f"finding:{row.id}",
            before={"kind": row.kind, "chainId": row.chain_id, "address": row.address, "detail": row.detail},
        )


def awaiting_approval(chains: Chains) -> list[dict[str, Any]]:
    """REQUESTED payouts above their operator's approval threshold, undecided, oldest first."""
    rows = []
    requested = Payout.select().where(Payout.status == "REQUESTED").order_by(Payout.id).limit(AWAITING_LIMIT)
    for payout in requested:
        if ledger_controls.decision_of(payout) is None and ledger_controls.needs_approval(payout):
            rows.append(
                {
                    "id": str(payout.id),
                    "payoutId": payout.payout_id,
                    "operatorId": payout.operator_id,
                    "chainId": payout.chain_id,
                    "asset": payout.asset,
                    "amountMinor": str(payout.amount_minor),
                    "amount": _units(chains, payout.chain_id, payout.asset, payout.amount_minor),
                    "destination": payout.destination,
                    "createdAt": clock.iso(payout.created_at),
                }
            )
    return rows


def decide(payout_id: int, approve: bool, who: str, memo: str | None) -> dict[str, Any]:
    payout = Payout.get_or_none(Payout.id == payout_id)
    if payout is None:
        raise NotFound("No such payout.")
    try:
        return ledger.decide(payout, approve, who, memo)
    except ledger.LedgerError as exc:
        raise Conflict(str(exc)) from None


def operators(chains: Chains) -> list[dict[str, Any]]:
    rows = []
    for entry in list_operators():
        operator_id = str(entry["operatorId"])
        controls = ledger.controls(operator_id)
        balances = ledger.balance(operator_id)
        for row in balances.get("balances", []):
            chain_id, _, code = str(row.get("assetId", ":")).partition(":")
            for name in [k for k in row if k.endswith("Minor")]:
                row[name.removesuffix("Minor")] = _units(chains, chain_id, code, row[name])
        for limit in controls.get("limits", []):
            chain_id, _, code = str(limit["assetId"]).partition(":")
            limit["summary"] = ", ".join(
                f"{label} {_units(chains, chain_id, code, limit[name])}"
                for name, label in LIMIT_WORDS
                if limit.get(name) is not None
            )
        rows.append(
            {"operatorId": operator_id, "controls": controls, "balances": balances.get("balances", [])}
        )
    return rows


def set_paused(operator_id: str, paused: bool, who: str) -> dict[str, Any]:
    try:
        return ledger.set_paused(operator_id, paused, who)
    except ledger.LedgerError as exc:
        raise NotFound(str(exc)) from None


def sweeps(limit: int = 50) -> dict[str, Any]:
    from appliance.engine.sweeps.view import recent

    return recent(limit, None)


def audit_tail(limit: int = 100) -> list[dict[str, Any]]:
    from appliance.engine.models.audit import AuditEntry

    last = AuditEntry.select(AuditEntry.id).order_by(AuditEntry.id.desc()).first()
    start = max(0, (last.id if last else 0) - limit)
    return list(reversed(audit.entries(after_id=start, limit=limit)))


def overview(chains: Chains, settings: Any) -> dict[str, Any]:
    verification = audit.verify()
    return {
        "backups": backups(settings),
        "findings": findings(chains),
        "foreign": foreign_pending(),
        "approvals": awaiting_approval(chains),
        "operators": operators(chains),
        "sweeps": sweeps(),
        "audit": audit_tail(),
        "auditChain": verification.as_json(),
    }


def foreign_pending() -> list[dict[str, Any]]:
    from appliance.engine.payouts import foreign

    return foreign.listing("pending")


def decide_foreign(
    chains: Chains,
    chain_id: str,
    tx_hash: str,
    payout_id: str | None,
    operator_id: str | None,
    memo: str | None,
) -> dict[str, Any]:
    """Adopt a foreign transaction for the payout it pays (``payout_id``), or reject it (None)."""
    from appliance.engine.payouts import foreign
    from appliance.engine.payouts.cancel import CancelError, find

    try:
        if payout_id is None:
            return foreign.reject(chain_id, tx_hash, ACTOR, memo)
        return foreign.adopt(chains, chain_id, tx_hash, find(payout_id, operator_id), ACTOR, memo)
    except (foreign.ForeignError, CancelError) as exc:
        raise Conflict(str(exc)) from None


def backups(settings: Any) -> dict[str, Any]:
    """The scheduled backups' last runs and each kept backup's latest restore drill (their history
    lives in the dispatch database: read here through a connection of its own)."""
    from appliance.backups import history
    from appliance.common.db import make_database

    if settings.backup_every_hours <= 0:
        return {"scheduled": False, "runs": [], "drills": []}
    db = make_database(settings.dispatch_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    try:
        with db.bind_ctx([history.BackupRun, history.BackupDrill]), db.connection_context():
            runs = list(history.BackupRun.select().order_by(history.BackupRun.id.desc()).limit(10))
            drills = history.latest_drills()
    finally:
        db.close()
    return {
        "scheduled": True,
        "everyHours": settings.backup_every_hours,
        "runs": [
            {
                "name": r.name,
                "finishedAt": clock.iso(r.finished_at),
                "passed": bool(r.passed),
                "bytes": str(r.bytes),
                "destinations": r.destinations,
                "error": r.error,
            }
            for r in runs
        ],
        "drills": [
            {
                "backup": d.backup,
                "destination": d.destination,
                "drilledAt": clock.iso(d.drilled_at),
                "passed": bool(d.passed),
                "detail": d.detail,
            }
            for d in drills
        ],
    }


def ledger_entries(chains: Chains, operator_id: str, limit: int = 50) -> dict[str, Any]:
    """The operator's newest ledger legs (balance account only: what changed what it may pay out),
    with amounts in the asset's units."""
    from appliance.engine.ledger import book
    from appliance.engine.ledger.models import LedgerEntry
    from appliance.engine.models import Operator

    if Operator.get_or_none(Operator.id == operator_id) is None:
        raise NotFound("No such operator.")
    rows = (
        LedgerEntry.select()
        .where((LedgerEntry.operator == operator_id) & (LedgerEntry.account == book.BALANCE))
        .order_by(LedgerEntry.id.desc())
        .limit(limit)
    )
    return {
        "operatorId": operator_id,
        "entries": [
            {
                "journal": row.journal,
                "kind": row.kind,
                "assetId": f"{row.chain_id}:{row.asset_code}",
                "amountMinor": row.amount_minor,
                "amount": _units(chains, row.chain_id, row.asset_code, row.amount_minor),
                "ref": row.ref,
                "memo": row.memo,
                "actor": row.actor,
                "createdAt": clock.iso(row.created_at),
            }
            for row in rows
        ],
    }
