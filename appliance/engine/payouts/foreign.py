"""An administrator's decision on a transaction found at a custody wallet's nonce whose signed bytes
the engine does not hold (issue 44, item 5): the nonce fencing never takes one as its own, it
fences the wallet and keeps the transaction (``foreign_transaction``, status ``pending``) until:

- adopt: it is recorded as the engine's transaction for a named payout, which it must pay exactly
  (the payout wallet's transfer of the payout's asset and amount to its destination); the payout
  (REQUESTED) then confirms like any other and is never signed again;
- reject-foreign: it is a foreign outflow; reconcile keeps reporting it (an ``unknown_outflow`` at
  its nonce, critical, until acknowledged) and the engine's counter continues after it.

Each decision is written with who made it (the OS user running the command, or --by), when and
what, in one write transaction. Once no transaction of the wallet waits for a decision, its fence
is lifted and signing goes on at the next nonce.
"""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine import audit
from appliance.engine.chain.base import FeeQuote
from appliance.engine.chain.registry import Chains
from appliance.engine.db import database
from appliance.engine.models import Broadcast, ForeignTransaction, Payout, Wallet
from appliance.engine.outgoing import transactions
from appliance.engine.outgoing.fencing import pays
from appliance.engine.payouts.state import transition


class ForeignError(Exception):
    """The decision cannot be made as asked (the reason says why); nothing was written."""


def body(row: ForeignTransaction) -> dict[str, Any]:
    to, value, data = transactions.decode_raw(row.raw)
    payout = Payout.get_or_none(Payout.id == row.payout_id) if row.payout_id else None
    return {
        "chainId": row.chain_id,
        "wallet": row.wallet,
        "role": row.role,
        "nonce": str(row.nonce),
        "txHash": row.tx_hash,
        "blockNumber": str(row.block_number),
        "to": to,
        "valueMinor": str(value),
        "data": "0x" + data.hex(),
        "status": row.status,
        "foundAt": clock.iso(row.found_at),
        "decidedAt": clock.iso(row.decided_at) if row.decided_at else None,
        "decidedBy": row.decided_by,
        "payoutId": payout.payout_id if payout else None,
        "note": row.note,
    }


def listing(status: str | None = None) -> list[dict[str, Any]]:
    query = ForeignTransaction.select().order_by(ForeignTransaction.id)
    if status is not None:
        query = query.where(ForeignTransaction.status == status)
    return [body(row) for row in query]


def _pending(chain_id: str, tx_hash: str) -> ForeignTransaction:
    row = ForeignTransaction.get_or_none(
        (ForeignTransaction.chain_id == chain_id) & (ForeignTransaction.tx_hash == tx_hash.lower())
    )
    if row is None:
        raise ForeignError(
            f"no transaction {tx_hash} on {chain_id} waits for a decision (see `appliance payout foreign`)"
        )
    if row.status != "pending":
        raise ForeignError(f"transaction {tx_hash} was {row.status} by {row.decided_by} already")
    return row


def _decide(row: ForeignTransaction, status: str, by: str, note: str | None, payout: Payout | None) -> None:
    changed = (
        ForeignTransaction.update(
            status=status,
            decided_at=clock.now(),
            decided_by=by[:200],
            note=note,
            payout=payout.id if payout else None,
        )
        .where((ForeignTransaction.id == row.id) & (ForeignTransaction.status == "pending"))
        .execute()
    )
    if changed != 1:
        raise ForeignError(f"transaction {row.tx_hash} was decided meanwhile")
    row.decided_by = by[:200]
    decided = {"wallet": row.wallet, "nonce": str(row.nonce), "by": by[:200], "note": note}
    if payout is not None:
        decided["payoutId"] = payout.payout_id
    audit.record(f"foreign.{status}", f"tx:{row.chain_id}/{row.tx_hash}", after=decided)


def _release(chain_id: str, address: str) -> bool:
    """Once no transaction of the wallet waits for a decision: the counter continues after the
    decided nonces and the fence is lifted (inside the caller's write transaction). Returns
    whether the wallet may sign again."""
    wallet = transactions.locked_wallet(chain_id, address)
    waiting = ForeignTransaction.select().where(
        (ForeignTransaction.chain_id == chain_id)
        & (ForeignTransaction.wallet == address)
        & (ForeignTransaction.status == "pending")
    )
    if waiting.exists():
        return False
    decided = {
        int(r.nonce): int(r.block_number)
        for r in ForeignTransaction.select().where(
            (ForeignTransaction.chain_id == chain_id) & (ForeignTransaction.wallet == address)
        )
    }
    nonce, block = int(wallet.next_nonce), wallet.verified_block
    while nonce in decided:
        # The wallet's later transactions are in this block or after: a scan starts there.
        block = max(int(block or 0), decided[nonce])
        nonce += 1
    Wallet.update(fence_reason=None, next_nonce=nonce, verified_block=block, scan_block=None).where(
        Wallet.id == wallet.id
    ).execute()
    return True


def adopt(
    chains: Chains, chain_id: str, tx_hash: str, payout: Payout, by: str, note: str | None
) -> dict[str, Any]:
    """Record the foreign transaction ``tx_hash`` as ``payout``'s own: it must come from the payout
    wallet and pay the payout exactly, and the payout must still be REQUESTED (never signed)."""
    row = _pending(chain_id, tx_hash)
    if row.role != "payout":
        raise ForeignError(
            f"transaction {row.tx_hash} is from the {row.role} wallet: only a payout wallet's transaction "
            "can be adopted for a payout (reject it with `appliance payout reject-foreign`)"
        )
    raw = bytes.fromhex(row.raw)
    if transactions.tx_hash_of(raw) != row.tx_hash:
        raise ForeignError(f"the stored bytes of {row.tx_hash} do not hash to it")
    if payout.chain_id != chain_id:
        raise ForeignError(f"payout {payout.payout_id} is on {payout.chain_id}, not {chain_id}")
    if payout.status != "REQUESTED":
        raise ForeignError(
            f"payout {payout.payout_id} is {payout.status}: only a payout never signed can be adopted"
        )
    paid = pays(chains, chain_id, raw)
    wanted = (payout.asset, str(payout.destination).lower(), int(payout.amount_minor))
    if paid is None or (paid[0], paid[1].lower(), paid[2]) != wanted:
        what = "nothing this engine pays" if paid is None else f"{paid[2]} {paid[0]} to {paid[1]}"
        raise ForeignError(
            f"transaction {row.tx_hash} pays {what}, not payout {payout.payout_id} ({payout.amount_minor} "
            f"{payout.asset} to {payout.destination}): it cannot be adopted for it"
        )
    with write_transaction(database):
        _decide(row, "adopted", by, note, payout)
        store_adopted(chain_id, row, payout, int(row.block_number))
        released = _release(chain_id, row.wallet)
    return {**body(ForeignTransaction.get_by_id(row.id)), "walletReleased": released}


def reject(chain_id: str, tx_hash: str, by: str, note: str | None) -> dict[str, Any]:
    """Record the foreign transaction ``tx_hash`` as a foreign outflow: nothing of the engine's is
    taken as paid by it; reconcile keeps it as an unknown outflow until it is acknowledged."""
    row = _pending(chain_id, tx_hash)
    with write_transaction(database):
        _decide(row, "rejected", by, note, None)
        released = _release(chain_id, row.wallet)
    return {**body(ForeignTransaction.get_by_id(row.id)), "walletReleased": released}


def store_adopted(chain_id: str, tx: ForeignTransaction, payout: Payout, head: int) -> Broadcast:
    """Record a foreign transaction an administrator adopted as ``payout``'s payload (inside the
    caller's write transaction): a reservation found mined, confirmed like any other."""
    raw = bytes.fromhex(tx.raw)
    decoded = transactions.fees_of(raw)
    origin = transactions.Origin(payout.id, "payout", chain_id, tx.wallet, int(tx.nonce))
    fees = FeeQuote(decoded.max_fee_per_gas, decoded.max_priority_fee_per_gas)
    broadcast = transactions.store(origin, raw, tx.tx_hash, fees, decoded.gas, "mined", head)
    transition(payout, "SIGNED", signed_payload_digest=broadcast.digest, tx_hash=broadcast.tx_hash)
    transition(
        payout,
        "BROADCAST",
        tx_hash=broadcast.tx_hash,
        reason=f"found on chain at nonce {tx.nonce} ({tx.tx_hash}), signed outside this engine's "
        f"records; adopted by {tx.decided_by}: confirmed like any other, never signed again",
        next_attempt_at=None,  # looked at by the next pass, not after the fenced wallet's back-off
    )
    return broadcast
