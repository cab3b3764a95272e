"""The administrator's side of the ledger and the controls (`appliance operator …`, `appliance
payout approve|reject`): each change is one write transaction; answers are plain dicts (JSON)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from peewee import fn

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.engine import audit
from appliance.engine.chain.registry import LOCAL_CHAIN_ID, check_destination, eip55
from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.ledger.controls import (
    APPROVAL_WINDOW_HOURS,
    LEDGER_MODES,
    MAX_APPROVAL_WINDOW_HOURS,
    UNLIMITED,
    control_of,
    needs_approval,
)
from appliance.engine.ledger.models import (
    OperatorControl,
    OperatorDestination,
    OperatorLimit,
    PayoutApproval,
    PayoutApprovalWindow,
)
from appliance.engine.models import Operator, Payout
from appliance.engine.payouts.state import transition
from appliance.engine.webhooks.events import PAYOUT_FAILED, emit

AMOUNT = re.compile(r"[0-9]{1,78}")


class LedgerError(Exception):
    """A refused administrator's command; one line for the terminal."""


def offered_assets(settings: Any) -> list[tuple[str, str]]:
    """(chain id, asset code) of every asset the settings offer, without opening a chain."""
    assets = [(LOCAL_CHAIN_ID, "ETH"), (LOCAL_CHAIN_ID, "USDC")] if settings.local_chain else []
    for chain in settings.chains:
        assets.extend((chain.id, asset.code) for asset in chain.assets)
    return assets


def resolve_asset(settings: Any, text: str) -> tuple[str, str]:
    """``chainId:assetCode`` (an assetId of GET /v1/assets), or a code offered on one chain."""
    offered = offered_assets(settings)
    if ":" in text:
        chain_id, _, code = text.partition(":")
        if (chain_id, code) in offered:
            return chain_id, code
        raise LedgerError(f"asset {text} is not offered by this deployment")
    matches = [pair for pair in offered if pair[1] == text]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise LedgerError(f"asset {text} is not offered by this deployment")
    raise LedgerError(f"asset {text} is offered on several chains: name one as chainId:{text}")


def parse_amount(text: str, *, option: str = "--amount") -> int:
    if not AMOUNT.fullmatch(text) or int(text) == 0:
        raise LedgerError(f"{option} must be a positive whole number of minor units (wei, not ETH)")
    return int(text)


def _operator(operator_id: str) -> None:
    if Operator.get_or_none(Operator.id == operator_id) is None:
        raise LedgerError(f"no operator {operator_id}")


def _control(operator_id: str) -> OperatorControl:
    """The operator's control row, locked, created with the defaults (unlimited, not paused)."""
    query = OperatorControl.select().where(OperatorControl.operator == operator_id)
    row = locked(query).get_or_none()
    if row is None:
        OperatorControl.insert(
            operator=operator_id, ledger_mode=UNLIMITED, paused=False, updated_at=clock.now()
        ).on_conflict_ignore().execute()
        row = locked(query).get()  # a fresh query (first() would answer its cached None)
    return row


def adjust(
    operator_id: str, chain_id: str, code: str, amount: int, *, memo: str, actor: str
) -> dict[str, Any]:
    if not memo.strip():
        raise LedgerError("--memo is required: say why the balance is adjusted")
    with write_transaction(database):
        _operator(operator_id)
        journal = book.adjust(operator_id, chain_id, code, amount, memo=memo, actor=actor)
        adjusted = {
            "chainId": chain_id,
            "asset": code,
            "amountMinor": str(amount),
            "memo": memo,
            "journal": journal,
        }
        audit.record("ledger.adjusted", f"operator:{operator_id}", after=adjusted)
    return {"journalId": journal, **balance(operator_id)}


def set_ledger_mode(operator_id: str, mode: str) -> dict[str, Any]:
    if mode not in LEDGER_MODES:
        raise LedgerError(f"ledger mode must be one of {', '.join(LEDGER_MODES)}")
    with write_transaction(database):
        _operator(operator_id)
        before = _control(operator_id).ledger_mode
        audit.record(
            "controls.ledger_mode", f"operator:{operator_id}", before={"mode": before}, after={"mode": mode}
        )
        OperatorControl.update(ledger_mode=mode, updated_at=clock.now()).where(
            OperatorControl.operator == operator_id
        ).execute()
    return controls(operator_id)


def set_paused(operator_id: str, paused: bool, actor: str) -> dict[str, Any]:
    with write_transaction(database):
        _operator(operator_id)
        before = bool(_control(operator_id).paused)
        audit.record(
            "operator.paused" if paused else "operator.resumed",
            f"operator:{operator_id}",
            before={"paused": before},
            after={"paused": paused},
        )
        OperatorControl.update(
            paused=paused,
            paused_by=actor if paused else None,
            paused_at=clock.now() if paused else None,
            updated_at=clock.now(),
        ).where(OperatorControl.operator == operator_id).execute()
    return controls(operator_id)


def _window_hours(text: str) -> int | None:
    if text.lower() == "none":
        return None
    if not text.isdigit() or not 1 <= int(text) <= MAX_APPROVAL_WINDOW_HOURS:
        raise LedgerError(f"--approval-window must be 1 to {MAX_APPROVAL_WINDOW_HOURS} hours ('none': 24)")
    return int(text)


def set_limits(operator_id: str, chain_id: str, code: str, changes: dict[str, str | None]) -> dict[str, Any]:
    """``changes``: max_payout_minor, daily_volume_minor, approval_above_minor,
    approval_rolling_minor, exposure_ceiling_minor (minor units), approval_window_hours (hours);
    a value "none" removes
    that limit (the window: back to 24 h), an absent key leaves it."""
    values: dict[str, str | int | None] = {}
    for name, text in changes.items():
        if text is None:
            continue
        if name == "approval_window_hours":
            values[name] = _window_hours(text)
        else:
            values[name] = None if text.lower() == "none" else str(parse_amount(text, option=name))
    with write_transaction(database):
        _operator(operator_id)
        OperatorLimit.insert(
            operator=operator_id, chain_id=chain_id, asset_code=code, updated_at=clock.now()
        ).on_conflict_ignore().execute()
        this_limit = (
            (OperatorLimit.operator == operator_id)
            & (OperatorLimit.chain_id == chain_id)
            & (OperatorLimit.asset_code == code)
        )
        before = OperatorLimit.get(this_limit)
        OperatorLimit.update(**values, updated_at=clock.now()).where(this_limit).execute()
        limit = OperatorLimit.get(this_limit)
        audit.record(
            "controls.limits",
            f"operator:{operator_id}",
            before={"chainId": chain_id, "asset": code, **{name: getattr(before, name) for name in values}},
            after={"chainId": chain_id, "asset": code, **{name: getattr(limit, name) for name in values}},
        )
        if limit.approval_rolling_minor is not None:
            _record_window(operator_id, chain_id, code, limit.approval_window_hours or APPROVAL_WINDOW_HOURS)
    return controls(operator_id)


def _record_window(operator_id: str, chain_id: str, code: str, hours: int) -> None:
    """Enter into the rolling approval window the operator's payouts of the asset submitted within
    it while no threshold was set (admissions enter only their own, and only under a threshold;
    those are the payouts stored after the last one entered): the first payout admitted under a
    new threshold is counted with them, as later ones are. None of them waits for approval (each
    was admitted under the controls of its time). They continue the running total in the order
    they were stored, dated no earlier than the last entry, so the totals follow the dates."""
    window = PayoutApprovalWindow
    scope = (window.operator == operator_id) & (window.chain_id == chain_id) & (window.asset_code == code)
    last = window.select().where(scope).order_by(window.created_at.desc(), window.id.desc()).first()
    newest_entered = window.select(fn.MAX(window.payout)).where(scope).scalar() or 0
    running = int(last.cumulative_minor) if last else 0
    floor = last.created_at if last else None
    since = clock.now() - timedelta(hours=hours)
    payouts = (
        Payout.select(Payout.id, Payout.amount_minor, Payout.created_at)
        .where(
            (Payout.operator == operator_id)
            & (Payout.chain_id == chain_id)
            & (Payout.asset == code)
            & (Payout.created_at >= since)
            & (Payout.id > newest_entered)
        )
        .order_by(Payout.id)
    )
    rows = []
    for payout in payouts:
        running += int(payout.amount_minor)
        dated = payout.created_at if floor is None else max(floor, payout.created_at)
        floor = dated
        rows.append(
            {
                "payout": payout.id,
                "operator": operator_id,
                "chain_id": chain_id,
                "asset_code": code,
                "amount_minor": payout.amount_minor,
                "cumulative_minor": str(running),
                "window_sum_minor": payout.amount_minor,
                "approval_due": False,
                "created_at": dated,
            }
        )
    for start in range(0, len(rows), 500):
        window.insert_many(rows[start : start + 500]).execute()


def set_destination(operator_id: str, chain_id: str, address: str, allowed: bool) -> dict[str, Any]:
    try:
        check_destination(address)
    except Exception:
        raise LedgerError(
            "the address must be 0x and 40 hex digits (a valid EIP-55 checksum if mixed case)"
        ) from None
    with write_transaction(database):
        _operator(operator_id)
        audit.record(
            "controls.destination_allowed" if allowed else "controls.destination_removed",
            f"operator:{operator_id}",
            after={"chainId": chain_id, "address": eip55(address)},
        )
        if allowed:
            OperatorDestination.insert(
                operator=operator_id, chain_id=chain_id, address=eip55(address), created_at=clock.now()
            ).on_conflict_ignore().execute()
        else:
            OperatorDestination.delete().where(
                (OperatorDestination.operator == operator_id)
                & (OperatorDestination.chain_id == chain_id)
                & (OperatorDestination.address == eip55(address))
            ).execute()
    return controls(operator_id)


def controls(operator_id: str) -> dict[str, Any]:
    _operator(operator_id)
    control = control_of(operator_id)
    limits = OperatorLimit.select().where(OperatorLimit.operator == operator_id).order_by(OperatorLimit.id)
    destinations = (
        OperatorDestination.select()
        .where(OperatorDestination.operator == operator_id)
        .order_by(OperatorDestination.id)
    )
    return {
        "operatorId": operator_id,
        "ledgerMode": control.ledger_mode if control else UNLIMITED,
        "paused": bool(control and control.paused),
        "pausedBy": control.paused_by if control else None,
        "pausedAt": clock.iso(control.paused_at) if control and control.paused_at else None,
        "limits": [
            {
                "assetId": f"{row.chain_id}:{row.asset_code}",
                "maxPayoutMinor": row.max_payout_minor,
                "dailyVolumeMinor": row.daily_volume_minor,
                "approvalAboveMinor": row.approval_above_minor,
                "approvalRollingMinor": row.approval_rolling_minor,
                "approvalWindowHours": (row.approval_window_hours or APPROVAL_WINDOW_HOURS)
                if row.approval_rolling_minor is not None
                else None,
                "exposureCeilingMinor": row.exposure_ceiling_minor,
            }
            for row in limits
        ],
        "allowedDestinations": [{"chainId": row.chain_id, "address": row.address} for row in destinations],
    }


def balance(operator_id: str) -> dict[str, Any]:
    _operator(operator_id)
    control = control_of(operator_id)
    rows = []
    for (chain_id, code), accounts in sorted(book.balances(operator_id).items()):
        rows.append(
            {
                "assetId": f"{chain_id}:{code}",
                "chainId": chain_id,
                "assetCode": code,
                "availableMinor": str(accounts[book.BALANCE]),
                "inFlightMinor": str(accounts[book.IN_FLIGHT]),
                "depositedMinor": str(-accounts[book.DEPOSITS]),
                "paidOutMinor": str(accounts[book.PAID_OUT]),
                "networkFeesMinor": str(accounts[book.FEES]),
                "adjustmentsMinor": str(-accounts[book.ADJUSTMENTS]),
            }
        )
    return {
        "operatorId": operator_id,
        "ledgerMode": control.ledger_mode if control else UNLIMITED,
        "balances": rows,
    }


def decide(payout: Payout, approve: bool, actor: str, memo: str | None = None) -> dict[str, Any]:
    """An administrator's approval or rejection of a payout above its operator's threshold: the
    decision (who, when) is recorded once; a rejection makes the payout FAILED with the reason."""
    moment = clock.now()
    with write_transaction(database):
        # The payout's row locked first (FOR UPDATE on PostgreSQL): two administrators deciding at
        # once (two hosts) take turns, and the second sees the first's decision and status instead
        # of both passing the checks below and one failing on the unique key.
        payout = locked(Payout.select().where(Payout.id == payout.id)).get()
        if payout.status != "REQUESTED":
            raise LedgerError(
                f"payout {payout.payout_id} is {payout.status}: only a REQUESTED payout is decided"
            )
        if not needs_approval(payout):
            raise LedgerError(
                f"payout {payout.payout_id} is not above its operator's approval threshold: nothing to decide"
            )
        if PayoutApproval.get_or_none(PayoutApproval.payout == payout.id) is not None:
            raise LedgerError(f"payout {payout.payout_id} is already decided")
        decision = "approved" if approve else "rejected"
        PayoutApproval.create(payout=payout.id, decision=decision, decided_by=actor, decided_at=moment)
        audit.record(
            f"payout.{decision}",
            f"payout:{payout.operator_id}/{payout.payout_id}",
            after={"decidedBy": actor, "memo": memo},
        )
        if not approve:
            transition(
                payout,
                "FAILED",
                reason=f"rejected by the administrator {actor} at {clock.iso(moment)}"
                + (f": {memo}" if memo else "")
                + "; nothing was signed or paid",
            )
            from appliance.engine.payouts.service import entry

            emit(payout.operator_id, PAYOUT_FAILED, {**entry(payout), "networkFeeMinor": None})
        else:
            # Looked at again at once by the pipeline.
            Payout.update(next_attempt_at=moment).where(Payout.id == payout.id).execute()
    return {
        "payoutId": payout.payout_id,
        "operatorId": payout.operator_id,
        "decision": decision,
        "decidedBy": actor,
        "decidedAt": clock.iso(moment),
        "status": payout.status,
    }
