"""Following a reservation on chain: one lifecycle for every transaction the engine sends —
payouts, sweeps, gas top-ups, and cancellations (a payout's replacement at its nonce).

One look (``follow``) at a reservation moves it at most one step:

- signed: the stored bytes are handed to the chain (each hand-over an attempt, which payouts
  keep). Refused as a used nonce: mined already (found by its receipt) or looked up at the nonce
  (``used_nonce``); underpriced: replaced at its nonce; anything else: handed over again later.
- sent or mined: the receipt of any payload signed at its nonce, final with the confirmations. A
  block that left the canonical chain sends the reservation back to signed (a reorg), unless a
  node behind merely lacks it. Pending: replaced when the market outgrew it, handed over again
  every RESEND_AFTER, and looked up at its nonce when the chain says the nonce is used.

What the reservation pays (a payout, a sweep, a top-up: a ``Side``) moves in the transaction of
the broadcast's own move. Only stored bytes are ever handed to the chain; every status move goes
through state.transition.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable
from datetime import timedelta

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.base import (
    Chain,
    ChainError,
    ChainTransaction,
    FeeQuote,
    Receipt,
    Rejection,
    TransactionRejected,
)
from appliance.engine.db import database
from appliance.engine.models import Broadcast, SignedPayload
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import state, transactions
from appliance.engine.outgoing.fencing import Fencing, fence_foreign

log = logging.getLogger("appliance.engine.outgoing")

RESEND_AFTER = timedelta(seconds=15)  # a pending transaction is handed to the node again this often
ABOVE_CEILING_AGAIN = timedelta(seconds=15)  # a replacement above the fee ceiling: looked at again
REFUSED_AGAIN = timedelta(seconds=10)  # bytes the chain refused: handed over again after

# What each hand-over is called in a payout's attempts (GET /payouts/{id}: attempts[].outcome).
SENT, UNREACHABLE = "SENT", "UNREACHABLE"
REFUSED: dict[Rejection, str] = {
    Rejection.NONCE_USED: "REJECTED_NONCE_USED",
    Rejection.UNDERPRICED: "REJECTED_UNDERPRICED",
    Rejection.INSUFFICIENT_FUNDS: "REJECTED_FUNDS",
    Rejection.OTHER: "REJECTED",
}


@dataclasses.dataclass(frozen=True)
class Look:
    """What one look found: the receipt once final with its confirmations, else when to look
    again (None: at once, something moved)."""

    receipt: Receipt | None = None
    after: timedelta | None = None


@dataclasses.dataclass(frozen=True)
class Course:
    """How a reservation is followed: the confirmations that make it final, the head, the
    fencing (where a nonce is looked up from; None: only from the block it was signed at) and
    how often a pending one is polled."""

    confirmations: int
    head: Callable[[], int]
    fencing: Fencing | None = None
    poll: timedelta = timedelta(seconds=1)


class Side:
    """What a reservation pays — a payout, a sweep, a gas top-up — and its part of each move of
    the reservation, written inside the transaction of the broadcast's own move. The defaults do
    nothing: a gas top-up has no row of its own."""

    noun = "transaction"
    role: str | None = None  # the wallet's role in the fencing; None: not fenced (a deposit address)
    keeps_attempts = False  # whether ``attempt`` writes anything (a write transaction is opened for it)

    def attempt(self, row: Broadcast, outcome: str, tx_hash: str | None) -> None:
        """One hand-over of the stored bytes and what the chain said (SENT, REFUSED[...])."""

    def sent(self, row: Broadcast, tx_hash: str) -> None:
        """The chain took the bytes (or had them mined already)."""

    def reorged(self, row: Broadcast, block: int) -> None:
        """Its block left the canonical chain: signed again, the same bytes to be sent."""

    def adopted(self, row: Broadcast, tx_hash: str) -> None:
        """The same call, signed by another copy of the data directory, is its payload now."""

    def taken(self, row: Broadcast, tx: ChainTransaction) -> None:
        """Its nonce was used by a transaction the engine did not sign, now with the
        confirmations: nothing of it can land, the reservation is final."""

    def bump(self, row: Broadcast, market: FeeQuote) -> Broadcast | None:
        """Replace the payload at its nonce with fees the market takes, stored before it is sent;
        None when it cannot be (above the fee ceiling)."""
        return None

    def wait(self, reason: str) -> None:
        """Why it waits, for whoever reads the row (a payout's detail) or the log."""
        log.info("%s waits: %s", self.noun, reason)


def follow(chain: Chain, row: Broadcast, course: Course, side: Side) -> Look:
    """One look at a reservation in flight (see the module's text)."""
    if row.status == "signed":
        return hand_over(chain, row, course, side)
    receipt = transactions.mined_payload(chain, row)
    if receipt is not None:
        record_mined(row, receipt)
        if depth(course.head(), receipt) >= course.confirmations:
            return Look(receipt)
        return Look(after=course.poll)
    if row.mined_block is not None:
        if block_still_there(chain, row):
            # A provider one block behind (or load-balanced over nodes) answers no receipt for a
            # moment: not a reorg while the block that held it is still canonical.
            return Look(after=course.poll or timedelta(seconds=1))
        block = int(row.mined_block)
        with write_transaction(database):
            reorged(row)
            side.reorged(row, block)
        log.warning(
            "%s at nonce %s: its block %s was reorganised away; sending again", side.noun, row.nonce, block
        )
        return Look()
    market = chain.fee_quote()
    if fee_rules.outgrown(row, market):
        # The base fee has outgrown what the payload may pay: it cannot be included at all.
        return _replace(row, market, side)
    if resend_due(row):
        state.touch(row)
        try:
            send(chain, row)
        except TransactionRejected as exc:
            if exc.kind is Rejection.NONCE_USED:  # used, and no receipt of ours: looked up
                return used_nonce(chain, row, course, side)
            log.info("%s at nonce %s: sent again, refused: %s", side.noun, row.nonce, exc.reason)
    return Look(after=course.poll)


def hand_over(chain: Chain, row: Broadcast, course: Course, side: Side) -> Look:
    """Send a signed reservation's stored bytes; the move to sent (with the side's) once the
    chain took them."""
    try:
        tx_hash = send(chain, row)
    except TransactionRejected as exc:
        return _refused(chain, row, course, side, exc)
    except ChainError:
        _attempt(side, row, UNREACHABLE, row.tx_hash)
        raise
    with write_transaction(database):
        side.attempt(row, SENT, tx_hash)
        state.transition(row, "sent")
        side.sent(row, tx_hash)
    return Look(after=course.poll)


def _refused(chain: Chain, row: Broadcast, course: Course, side: Side, exc: TransactionRejected) -> Look:
    if exc.kind is Rejection.NONCE_USED:
        receipt = transactions.mined_payload(chain, row)
        if receipt is not None:  # sent before (the answer lost) and mined
            with write_transaction(database):
                side.attempt(row, SENT, row.tx_hash)
                state.transition(row, "mined", **_where_mined(receipt))
                side.sent(row, row.tx_hash)
            return Look()
        _attempt(side, row, REFUSED[exc.kind], row.tx_hash)
        return used_nonce(chain, row, course, side)
    _attempt(side, row, REFUSED[exc.kind], row.tx_hash)
    if exc.kind is Rejection.UNDERPRICED:
        return _replace(row, chain.fee_quote(), side)
    side.wait(f"the chain refused the signed transaction ({exc.reason[:200]}); sending it again later")
    return Look(after=REFUSED_AGAIN)


def _attempt(side: Side, row: Broadcast, outcome: str, tx_hash: str | None) -> None:
    """An attempt that moves nothing else, in its own transaction (only for a side keeping them)."""
    if side.keeps_attempts:
        with write_transaction(database):
            side.attempt(row, outcome, tx_hash)


def _replace(row: Broadcast, market: FeeQuote, side: Side) -> Look:
    if side.bump(row, market) is None:
        return Look(after=ABOVE_CEILING_AGAIN)  # above the ceiling: look again later
    return Look()  # the replacement is sent at the next look


def used_nonce(chain: Chain, row: Broadcast, course: Course, side: Side) -> Look:
    """The chain says the reservation's nonce is used and no stored payload's receipt is found.
    Never final while it may have been paid: the transaction at that nonce is looked up on chain.
    Ours (a payload of this reservation) waits for its receipt; the same call signed by another
    copy of the data directory is adopted and confirmed; a foreign one fences the wallet and, once
    it has the confirmations, makes the reservation final without a receipt (``side.taken``);
    not visible yet (a provider behind): look again later, nothing signed meanwhile."""
    nonce, wallet = int(row.nonce), row.wallet
    found = at_nonce(chain, course.fencing, row)
    if found.found is Found.NO_START:
        return _waits(
            side,
            f"nonce {nonce} of {wallet} is used on chain and no receipt of this {side.noun}'s payloads is "
            "found; no block is known to look the transaction up from: an operator must check",
            timedelta(seconds=30),
        )
    tx = found.tx
    if tx is None:
        return _waits(
            side,
            f"nonce {nonce} of {wallet} is used on chain but its transaction is not visible yet "
            "(a node behind?); looking again, nothing signed meanwhile",
            timedelta(seconds=5),
        )
    if found.found is Found.OURS:
        if row.status == "signed":  # sent before (the answer lost) and mined
            with write_transaction(database):
                state.transition(row, "sent")
                side.sent(row, tx.tx_hash)
        return _waits(side, f"mined as {tx.tx_hash}; waiting for its receipt", timedelta(seconds=2))
    if found.found is Found.SAME_CALL:
        with write_transaction(database):
            transactions.adopt(row, tx.raw, tx.tx_hash)
            side.adopted(row, tx.tx_hash)
        log.warning(
            "%s at nonce %s of %s: found on chain as %s (signed elsewhere)",
            side.noun,
            nonce,
            wallet,
            tx.tx_hash,
        )
        return Look()
    reason = foreign_use(row, tx, block=True)
    if side.role is not None:
        fence_foreign(row.chain_id, wallet, side.role, tx, reason)
    if found.head - tx.block_number + 1 < course.confirmations:
        return _waits(side, reason, timedelta(seconds=2))  # a reorg may still give the nonce back
    with write_transaction(database):
        finalise(row, None)
        side.taken(row, tx)
    log.error(
        "%s at nonce %s of %s: taken by %s, not signed by this engine", side.noun, nonce, wallet, tx.tx_hash
    )
    return Look()


def _waits(side: Side, reason: str, after: timedelta) -> Look:
    side.wait(reason)
    return Look(after=after)


def resend_due(broadcast: Broadcast) -> bool:
    """Nodes drop transactions (restarts, pool limits): the same bytes are handed over again."""
    return bool(clock.now() - broadcast.updated_at >= RESEND_AFTER)


def send(chain: Chain, broadcast: Broadcast) -> str:
    """Hand the stored bytes to the chain; raises TransactionRejected (with its kind) or ChainError."""
    return chain.send_raw_transaction(bytes.fromhex(broadcast.raw))


def depth(head: int, receipt: Receipt) -> int:
    return head - receipt.block_number + 1


def record_mined(broadcast: Broadcast, receipt: Receipt) -> None:
    """Note the block that holds a payload of the reservation (a new one after a reorg)."""
    if broadcast.mined_block_hash == receipt.block_hash and broadcast.mined_tx_hash == receipt.tx_hash:
        return
    with write_transaction(database):
        state.transition(broadcast, "mined", **_where_mined(receipt))


def _where_mined(receipt: Receipt) -> dict[str, object]:
    return {
        "mined_tx_hash": receipt.tx_hash,
        "mined_block": receipt.block_number,
        "mined_block_hash": receipt.block_hash,
    }


def finalise(broadcast: Broadcast, receipt: Receipt | None) -> None:
    """The reservation is done (inside the caller's write transaction): confirmed with
    ``receipt``, or (None) its nonce was used by a transaction that is not ours."""
    if receipt is None:
        state.transition(broadcast, "final")
        return
    fee = str(receipt.gas_used * receipt.effective_gas_price)
    state.transition(broadcast, "final", fee_minor=fee, **_where_mined(receipt))


def reorged(broadcast: Broadcast) -> None:
    """Its block left the canonical chain: signed again, the same bytes to be sent (inside the
    caller's write transaction)."""
    state.transition(broadcast, "signed", mined_tx_hash=None, mined_block=None, mined_block_hash=None)


def block_still_there(chain: Chain, broadcast: Broadcast) -> bool:
    """Whether the block that held the broadcast may still be canonical: the same hash at its
    height, or no block at that height yet (a node behind the one that gave the receipt)."""
    ref = chain.block(int(broadcast.mined_block))
    return ref is None or ref.hash == broadcast.mined_block_hash


class Found(enum.Enum):
    """What the chain holds at a reservation's nonce when it says the nonce is used."""

    NO_START = "no block is known to look the transaction up from"
    NOT_VISIBLE = "not visible yet (a node behind?)"
    OURS = "a payload of this reservation"
    SAME_CALL = "the same call, signed by another copy of the data directory"
    FOREIGN = "a transaction this engine did not sign"


@dataclasses.dataclass(frozen=True)
class AtNonce:
    found: Found
    tx: ChainTransaction | None = None
    head: int = 0


def at_nonce(chain: Chain, fencing: Fencing | None, broadcast: Broadcast) -> AtNonce:
    """Look up the transaction at the reservation's (wallet, nonce), from the block it was signed
    at (or where the fencing knew the wallet)."""
    nonce, wallet = int(broadcast.nonce), broadcast.wallet
    start = broadcast.signed_block
    if start is None and fencing is not None:
        start = fencing.start_of(broadcast.chain_id, wallet)
    if start is None:
        return AtNonce(Found.NO_START)
    head = chain.head().number
    tx = transactions.transaction_at_nonce(
        chain, wallet, nonce, int(start) - transactions.VERIFIED_MARGIN, head
    )
    if tx is None:
        return AtNonce(Found.NOT_VISIBLE, None, head)
    ours = {p.tx_hash for p in SignedPayload.select().where(SignedPayload.broadcast == broadcast.id)}
    if tx.tx_hash in ours:
        return AtNonce(Found.OURS, tx, head)
    if (tx.to, tx.value, tx.data) == transactions.decode_call(broadcast):
        return AtNonce(Found.SAME_CALL, tx, head)
    return AtNonce(Found.FOREIGN, tx, head)


def foreign_use(broadcast: Broadcast, tx: ChainTransaction, *, block: bool = False) -> str:
    """The fence reason of a wallet whose nonce a foreign transaction used."""
    where = f" (block {tx.block_number})" if block else ""
    return (
        f"nonce {broadcast.nonce} of {broadcast.wallet} was used on chain by {tx.tx_hash}{where}, "
        "a transaction this engine did not sign; nothing more is signed for this wallet until an "
        "administrator decides (`appliance payout reject-foreign`, or `appliance payout unfence`)"
    )
