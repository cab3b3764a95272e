"""The payout state machine: one function moves a payout, checks the table of legal moves,
makes the move a compare-and-set on the stored status, and records the transition in the same
transaction.

REQUESTED  the instruction is recorded; the pipeline has not signed it (it may wait, with a
           reason, for custody, funds or gas).
SIGNED     a transaction at a reserved (wallet, nonce) is signed and stored; it is (re)sent from
           the stored bytes only.
BROADCAST  the chain accepted the stored bytes; waiting for inclusion and confirmations.
COMPLETED  included with the asset's confirmations and succeeded on chain: the amount reached
           the destination.
COMPLETED_SHORT  included and succeeded, but the token delivered less than the amount (a
           fee-on-transfer token): ``delivered_minor`` reached the destination, ``debited_minor``
           left the payout wallet and is what the operator's ledger is debited. Final: never
           released to be paid again (issue 44, item 6).
FAILED     can never succeed (reverted on chain, or its nonce was consumed by a transaction the
           engine did not send); never while a payload at its nonce can still land.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from appliance.common import clock
from appliance.common.compiled import insert_new, prepare_insert
from appliance.engine.ledger import book
from appliance.engine.models import Payout, PayoutTransition

STATUSES = ("REQUESTED", "SIGNED", "BROADCAST", "COMPLETED", "COMPLETED_SHORT", "FAILED")
FINAL = ("COMPLETED", "COMPLETED_SHORT", "FAILED")
PAID = ("COMPLETED", "COMPLETED_SHORT")  # final, and something reached the destination

# A payout is created REQUESTED (record_new); from there:
LEGAL_MOVES: dict[str, set[str]] = {
    "REQUESTED": {"SIGNED", "FAILED"},
    "SIGNED": {"BROADCAST", "FAILED"},
    # SIGNED again: the transaction left the canonical chain (a reorg, or dropped by the node)
    # and the same stored bytes are re-sent.
    "BROADCAST": {"COMPLETED", "COMPLETED_SHORT", "FAILED", "SIGNED"},
    "COMPLETED": set(),
    "COMPLETED_SHORT": set(),
    "FAILED": set(),
}


class IllegalMove(Exception):
    pass


class StaleMove(Exception):
    """Another worker moved the payout first; the caller's copy is stale and nothing was written."""


def record_new(payout: Payout) -> bool:
    """Store a new payout as REQUESTED with its first transition (inside the caller's
    transaction), unless its operator already has a payout with its idempotency key or its
    payoutId: then nothing is written and the answer is False. One statement decides, so the
    write lock is not held for a look-up first."""
    return prepare_new(payout)()


def prepare_new(payout: Payout) -> Callable[[], bool]:
    """``record_new`` with both statements built and bound now, to run later inside the write
    transaction (which then only executes them)."""
    payout.status = "REQUESTED"
    payout.reason = None
    payout.updated_at = payout.created_at
    stored = prepare_insert(payout, keep_existing=True)
    first = prepare_insert(
        PayoutTransition(payout=None, from_status=None, to_status="REQUESTED", occurred_at=payout.created_at)
    )

    def run() -> bool:
        if not stored.run():
            return False
        first.set("payout", payout.id)
        first.run()
        return True

    return run


def transition(payout: Payout, to: str, *, reason: str | None = None, **fields: Any) -> None:
    """Move a stored ``payout`` to ``to`` (inside the caller's transaction) as
    ``UPDATE … WHERE id = ? AND status = ?``: two workers holding the same stale copy can never both
    make it. A new payout is stored by ``record_new``."""
    current = payout.status
    if to not in LEGAL_MOVES.get(current, set()):
        raise IllegalMove(f"{current} -> {to}")
    moment = clock.now()
    changes: dict[str, Any] = {"status": to, "updated_at": moment, "reason": reason, **fields}
    updated = Payout.update(**changes).where((Payout.id == payout.id) & (Payout.status == current)).execute()
    if updated != 1:
        raise StaleMove(f"payout {payout.id} is no longer {current}")
    for name, value in changes.items():
        setattr(payout, name, value)
    insert_new(PayoutTransition(payout=payout.id, from_status=current, to_status=to, occurred_at=moment))
    # The operator's ledger moves with the payout, in the same transaction (reserve, release, settle).
    book.on_transition(payout, current, to)
