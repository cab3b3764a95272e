"""Spending controls of an operator (docs/engine-treasury.md, "Spending controls").

Two places enforce them:
- at submission (inside the payout's admission transaction): a paused operator is answered 503,
  a payout above the operator's maximum per payout or to a destination outside its allow-list 400
  (nothing stored);
- at reservation (inside the write transaction that takes the nonce, after the wallet's lock and
  with the operator's balance row of the asset locked: two nodes reserving for one operator take
  turns): a paused operator, a payout waiting for an administrator's approval, the rolling 24 h
  volume and, for a ``prefunded`` operator, its available balance. A payout held there waits in
  REQUESTED with the reason (the specification's statuses) and holds no nonce.
"""

from __future__ import annotations

from datetime import timedelta

import peewee
from peewee import fn

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.problems import BadRequest, Unavailable
from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.ledger.models import (
    LedgerEntry,
    OperatorControl,
    OperatorDestination,
    OperatorLimit,
    PayoutApproval,
)
from appliance.engine.models import Broadcast, Payout

UNLIMITED, PREFUNDED = "unlimited", "prefunded"
LEDGER_MODES = (UNLIMITED, PREFUNDED)
VOLUME_WINDOW = timedelta(hours=24)
FEE_HOLDING_BROADCASTS = ("signed", "sent", "mined")


def control_of(operator_id: str) -> OperatorControl | None:
    return OperatorControl.get_or_none(OperatorControl.operator == operator_id)


def limit_of(operator_id: str, chain_id: str, asset_code: str) -> OperatorLimit | None:
    return OperatorLimit.get_or_none(
        (OperatorLimit.operator == operator_id)
        & (OperatorLimit.chain_id == chain_id)
        & (OperatorLimit.asset_code == asset_code)
    )


def paused_detail(operator_id: str) -> str:
    return (
        f"Operator {operator_id} is paused by the deployment's administrator: payouts are not "
        "accepted or signed until it is resumed (`appliance operator resume`)."
    )


def _submission_controls() -> peewee.Select:
    """The operator's pause flag, its maximum per payout of the asset, how many destinations its
    allow-list on the chain holds and how many of them are the destination: one statement, read on
    every submission inside the write lock (three would hold it three round trips longer)."""
    operator = Slot("operator_id")
    allowed_here = (OperatorDestination.operator == operator) & (
        OperatorDestination.chain_id == Slot("chain_id")
    )
    return peewee.Select(
        columns=[
            OperatorControl.select(OperatorControl.paused).where(OperatorControl.operator == operator),
            OperatorLimit.select(OperatorLimit.max_payout_minor).where(
                (OperatorLimit.operator == operator)
                & (OperatorLimit.chain_id == Slot("chain_id"))
                & (OperatorLimit.asset_code == Slot("asset_code"))
            ),
            OperatorDestination.select(fn.COUNT(OperatorDestination.id)).where(allowed_here),
            # Stored addresses are EIP-55 spellings of their lower-case form: equal lower case is
            # the same address (no checksum to compute for every submission).
            OperatorDestination.select(fn.COUNT(OperatorDestination.id)).where(
                allowed_here & (fn.LOWER(OperatorDestination.address) == Slot("address"))
            ),
        ]
    )


_CONTROLS_AT_SUBMISSION = CompiledSelect(_submission_controls)


def check_submission(operator_id: str, chain_id: str, asset_code: str, amount: int, destination: str) -> None:
    """Refuse a new payout the operator's controls forbid outright (inside the admission's
    transaction, so a pause committed before is seen)."""
    ((paused, maximum, listed, listed_here),) = _CONTROLS_AT_SUBMISSION.raw_rows(
        database,
        operator_id=operator_id,
        chain_id=chain_id,
        asset_code=asset_code,
        address=destination.lower(),
    )
    if paused:
        raise Unavailable(paused_detail(operator_id))
    if maximum is not None and amount > int(maximum):
        raise BadRequest(
            f"amountMinor {amount} is above this operator's maximum per payout of {asset_code} on "
            f"{chain_id} ({maximum} minor units).",
            errors=[{"field": "amountMinor", "message": "above the operator's maximum per payout"}],
        )
    if listed and not listed_here:
        raise BadRequest(
            f"The destination is not on this operator's allow-list of destinations on {chain_id}; "
            "the deployment's administrator adds addresses (`appliance operator allow-destination`).",
            errors=[{"field": "destination", "message": "not on the operator's destination allow-list"}],
        )


def needs_approval(payout: Payout) -> bool:
    limit = limit_of(payout.operator_id, payout.chain_id, payout.asset)
    return (
        limit is not None
        and limit.approval_above_minor is not None
        and int(payout.amount_minor) > int(limit.approval_above_minor)
    )


def decision_of(payout: Payout) -> PayoutApproval | None:
    return PayoutApproval.get_or_none(PayoutApproval.payout == payout.id)


def volume(operator_id: str, chain_id: str, asset_code: str) -> int:
    """What the operator's payouts of the asset reserved in the last 24 hours, less those released
    (FAILED: nothing of them left the wallet)."""
    since = clock.now() - VOLUME_WINDOW
    scope = (
        (LedgerEntry.operator == operator_id)
        & (LedgerEntry.chain_id == chain_id)
        & (LedgerEntry.asset_code == asset_code)
        & (LedgerEntry.account == book.IN_FLIGHT)
    )
    reserved = {
        row.ref: int(row.amount_minor)
        for row in LedgerEntry.select(LedgerEntry.ref, LedgerEntry.amount_minor).where(
            scope & (LedgerEntry.kind == book.PAYOUT_RESERVE) & (LedgerEntry.created_at >= since)
        )
    }
    if not reserved:
        return 0
    released = {
        row.ref
        for row in LedgerEntry.select(LedgerEntry.ref).where(
            scope & (LedgerEntry.kind == book.PAYOUT_RELEASE) & (LedgerEntry.ref.in_(list(reserved)))
        )
    }
    return sum(amount for ref, amount in reserved.items() if ref not in released)


def fees_in_flight(operator_id: str, chain_id: str) -> int:
    """The most the operator's signed, unfinished payouts on the chain may still pay in fees."""
    rows = (
        Broadcast.select(Broadcast.gas_limit, Broadcast.max_fee_per_gas)
        .join(Payout, on=(Broadcast.payout == Payout.id))
        .where(
            (Payout.operator == operator_id)
            & (Broadcast.chain_id == chain_id)
            & (Broadcast.status.in_(FEE_HOLDING_BROADCASTS))
        )
    )
    return sum(int(row.gas_limit) * int(row.max_fee_per_gas) for row in rows)


def hold_reason(
    payout: Payout, *, native_code: str, native: bool, fee_cost: int, lock: bool = True
) -> str | None:
    """Why the payout may not be reserved now (None: it may). Called inside the reservation's
    write transaction; it locks the operator's balance rows of the payout's asset (and of the
    native asset), so reservations of one operator are serialised across processes and nodes.
    ``fee_cost`` is the most the payout's transaction may pay in fees (gas × maxFeePerGas).
    ``lock=False``: a look outside any transaction (nothing locked or written), before the chain
    is asked anything; only the look under the lock decides."""
    operator_id, chain_id, code = payout.operator_id, payout.chain_id, payout.asset
    balance_of = book.lock_balance if lock else book.read_balance
    available = balance_of(operator_id, chain_id, code)
    control = control_of(operator_id)
    if control is not None and control.paused:
        return paused_detail(operator_id) + " The payout waits, holding no nonce."
    limit = limit_of(operator_id, chain_id, code)
    amount = int(payout.amount_minor)
    if (
        limit is not None
        and limit.approval_above_minor is not None
        and amount > int(limit.approval_above_minor)
    ):
        decision = decision_of(payout)
        if decision is None or decision.decision != "approved":
            return (
                f"waiting for an administrator's approval: {amount} is above the operator's approval "
                f"threshold of {limit.approval_above_minor} {code} minor units (`appliance payout "
                f"approve|reject {payout.payout_id}`)"
            )
    if limit is not None and limit.daily_volume_minor is not None:
        used = volume(operator_id, chain_id, code)
        if used + amount > int(limit.daily_volume_minor):
            return (
                f"the operator's rolling 24 h volume of {code} on {chain_id} would be exceeded "
                f"({used} reserved in the last 24 h + {amount} > {limit.daily_volume_minor}); the payout "
                "waits, holding no nonce, until earlier payouts leave the window"
            )
    if control is None or control.ledger_mode != PREFUNDED:
        return None
    fees_held = fees_in_flight(operator_id, chain_id)
    if native:
        needed, held = amount + fee_cost + fees_held, available
        if held < needed:
            return _short(operator_id, code, chain_id, needed, held)
        return None
    if available < amount:
        return _short(operator_id, code, chain_id, amount, available)
    gas_available = balance_of(operator_id, chain_id, native_code)
    if gas_available < fee_cost + fees_held:
        return _short(operator_id, native_code, chain_id, fee_cost + fees_held, gas_available) + (
            " (the network fee of its payouts is debited to the operator)"
        )
    return None


def _short(operator_id: str, code: str, chain_id: str, needed: int, held: int) -> str:
    return (
        f"operator {operator_id} (ledger mode prefunded) has {held} {code} minor units available on "
        f"{chain_id}, the payout needs {needed} (amount and the most its network fee may be, with "
        "what its payouts in flight may still pay in fees); it waits, holding no nonce, until the "
        "operator's balance covers it"
    )
