"""The payout state machine: one function moves a payout, checks the table of legal moves and
records the transition in the same transaction."""

from __future__ import annotations

from appliance.common import clock
from appliance.engine.models import Payout, PayoutTransition

LEGAL_MOVES: dict[str | None, set[str]] = {
    None: {"REQUESTED"},
    "REQUESTED": {"SIGNED", "FAILED"},
    "SIGNED": {"BROADCAST", "FAILED"},
    "BROADCAST": {"COMPLETED", "FAILED", "SIGNED"},  # SIGNED again: a dropped transaction is re-sent
    "COMPLETED": set(),
    "FAILED": set(),
}


class IllegalMove(Exception):
    pass


def transition(payout: Payout, to: str, *, reason: str | None = None) -> None:
    """Move ``payout`` to ``to`` (call inside the caller's transaction)."""
    current = payout.status if payout.id is not None and payout.status else None
    if to not in LEGAL_MOVES.get(current, set()):
        raise IllegalMove(f"{current} -> {to}")
    moment = clock.now()
    payout.status = to
    payout.updated_at = moment  # type: ignore[assignment]
    if reason is not None:
        payout.reason = reason
    payout.save()
    PayoutTransition.create(payout=payout, from_status=current, to_status=to, occurred_at=moment)
