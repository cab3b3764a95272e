"""Following a reservation on chain, for every transaction the engine sends: its receipt and
confirmations, a reorg, a send again of the stored bytes, a replacement when the market outgrew
it, and what used its nonce when the chain says the nonce is taken.

Only stored bytes are ever handed to the chain; every status move goes through state.transition.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable
from datetime import timedelta

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.base import Chain, ChainTransaction, FeeQuote, Receipt, TransactionRejected
from appliance.engine.db import database
from appliance.engine.models import Broadcast, SignedPayload
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import state, transactions
from appliance.engine.outgoing.fencing import Fencing

log = logging.getLogger("appliance.engine.outgoing")

RESEND_AFTER = timedelta(seconds=15)  # a pending transaction is handed to the node again this often


def resend_due(broadcast: Broadcast) -> bool:
    """Nodes drop transactions (restarts, pool limits): the same bytes are handed over again."""
    return bool(clock.now() - broadcast.updated_at >= RESEND_AFTER)


def send(chain: Chain, broadcast: Broadcast) -> str:
    """Hand the stored bytes to the chain; raises TransactionRejected (with its kind) or ChainError."""
    return chain.send_raw_transaction(bytes.fromhex(broadcast.raw))


def send_and_mark(chain: Chain, broadcast: Broadcast, also: Callable[[], None] | None = None) -> None:
    """Send the stored bytes and, once the chain took them, move the broadcast to sent (with
    ``also``, the move of what it pays, in the same transaction)."""
    send(chain, broadcast)
    with write_transaction(database):
        state.transition(broadcast, "sent")
        if also is not None:
            also()


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


Bump = Callable[[Broadcast, FeeQuote], "Broadcast | None"]
Rejected = Callable[[Broadcast, TransactionRejected], None]


def follow(
    chain: Chain,
    row: Broadcast,
    confirmations: int,
    head: Callable[[], int],
    bump: Bump,
    rejected: Rejected,
    also_sent: Callable[[], None] | None = None,
) -> Receipt | None:
    """One look at a reservation in flight: its receipt once it has ``confirmations``; else it is
    recorded as mined, sent again after a reorg or a dropped send, or replaced (``bump``) when the
    market outgrew it. None while it is not final. ``rejected`` decides on a refused send."""
    receipt = transactions.mined_payload(chain, row)
    if receipt is not None:
        record_mined(row, receipt)
        return receipt if depth(head(), receipt) >= confirmations else None
    if row.mined_block is not None:  # mined once, not in the canonical chain now: send again
        with write_transaction(database):
            reorged(row)
    market = chain.fee_quote()
    if fee_rules.outgrown(row, market):
        row = bump(row, market) or row
        if row.status != "signed":
            return None
    if row.status == "signed" or resend_due(row):
        try:
            send_and_mark(chain, row, also_sent)
        except TransactionRejected as exc:
            rejected(row, exc)
    return None


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


def at_nonce(chain: Chain, fencing: Fencing, broadcast: Broadcast) -> AtNonce:
    """Look up the transaction at the reservation's (wallet, nonce), from the block it was signed
    at (or where the fencing knew the wallet)."""
    nonce, wallet = int(broadcast.nonce), broadcast.wallet
    start = broadcast.signed_block
    if start is None:
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
