"""The broadcast state machine: one function moves a reservation's status, checks the table of
legal moves, makes the move a compare-and-set on the stored status and records it in the same
transaction (as payouts.state does for payouts).

signed  a payload is signed and stored at the reserved (wallet, nonce); the chain has not
        accepted it yet (or it was replaced, or its block left the canonical chain).
sent    the chain accepted the stored bytes; waiting for a receipt.
mined   a payload of the reservation is in a canonical block, below its confirmations.
final   done: confirmed (succeeded or reverted), or its nonce was used by a foreign transaction.
"""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.compiled import insert_new
from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.models import Broadcast, BroadcastTransition

STATUSES = ("signed", "sent", "mined", "final")
UNFINISHED = ("signed", "sent", "mined")  # a reservation that may still need the chain
IN_FLIGHT = ("signed", "sent")  # signed and not in a block: the wallet's balance does not show it

# A broadcast is created signed (reserve_and_sign) or, found on chain by the fencing, mined. A move
# to the same status rewrites its fields: a replacement payload (signed), a send again (sent), the
# block that now holds it (mined).
LEGAL_MOVES: dict[str, set[str]] = {
    "signed": {"signed", "sent", "mined", "final"},
    # signed again: replaced at its nonce (a fee bump, a cancellation).
    "sent": {"signed", "sent", "mined", "final"},
    # signed again: its block left the canonical chain (a reorg), or replaced while below its
    # confirmations (a cancellation).
    "mined": {"signed", "mined", "final"},
    "final": set(),
}


class IllegalMove(Exception):
    pass


class StaleBroadcast(Exception):
    """Another worker moved the broadcast first; the caller's copy is stale, nothing was written."""


class OutsideTransaction(Exception):
    """A status move outside a write transaction: it must commit with what it goes with."""


def transition(broadcast: Broadcast, to: str, **fields: Any) -> None:
    """Move a stored ``broadcast`` to ``to`` (inside the caller's write transaction) as
    ``UPDATE … WHERE id = ? AND status = ?``, with ``fields`` written in the same statement."""
    if not database.in_transaction():
        raise OutsideTransaction(f"broadcast {broadcast.id} -> {to}")
    current = broadcast.status
    if to not in LEGAL_MOVES.get(current, set()):
        raise IllegalMove(f"{current} -> {to}")
    moment = clock.now()
    changes: dict[str, Any] = {"updated_at": moment, **fields, "status": to}
    updated = (
        Broadcast.update(**changes)
        .where((Broadcast.id == broadcast.id) & (Broadcast.status == current))
        .execute()
    )
    if updated != 1:
        raise StaleBroadcast(f"broadcast {broadcast.id} is no longer {current}")
    for name, value in changes.items():
        setattr(broadcast, name, value)
    if to != current:
        record(broadcast, current, moment)


def record(broadcast: Broadcast, current: str | None, moment: Any) -> None:
    """The audit row of a move (or of a new broadcast: ``current`` None)."""
    insert_new(
        BroadcastTransition(
            broadcast=broadcast.id, from_status=current, to_status=broadcast.status, occurred_at=moment
        )
    )


def touch(broadcast: Broadcast) -> None:
    """Note that the stored bytes were handed to the chain again (no move): the next send again is
    counted from now."""
    moment = clock.now()
    with write_transaction(database):
        Broadcast.update(updated_at=moment).where(Broadcast.id == broadcast.id).execute()
    broadcast.updated_at = moment  # type: ignore[assignment]
