"""What the sweeps moved, for the treasury's expected balances (treasury/positions.py).

A deposit address holds what was deposited to it, less what its sweeps moved out and the network
fees they paid, plus the gas the fee wallet topped it up with. Each of these counts once its
transaction is in the canonical chain at or below the block the positions are read at: a final
reservation by what was recorded when it became final; one still in flight by its receipt, asked
of the chain in the same bulk reader (so a sweep mined a moment ago is not a mismatch).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from eth_utils import to_checksum_address

from appliance.engine.chain.registry import Chains
from appliance.engine.models import Broadcast, BroadcastTransition, SignedPayload, Sweep, TreasuryFlowCursor
from appliance.engine.outgoing import transactions
from appliance.engine.sweeps.signing import SWEEP, TOPUP

UNMINED = ("signed", "sent")


def deposit_movements(
    chains: Chains, chain_id: str, reader: Any, block: int | None
) -> dict[tuple[str, str], int]:
    """(deposit address, asset code) → the change the sweeps not yet folded in made to its
    balance at ``block`` (None: the head). The folded ones are in ``treasury_movement``
    (treasury/positions.py adds them): only reservations still in flight and those made final
    since the fold's cursor are read here, however many sweeps the deployment has made."""
    since = folded_through(chain_id)
    finals = {int(b): int(t) for t, b in _made_final(chain_id, since).tuples()}
    rows = list(
        Broadcast.select().where(
            (Broadcast.chain_id == chain_id)
            & Broadcast.purpose.in_((SWEEP, TOPUP))
            & (Broadcast.status.in_(("signed", "sent", "mined")) | Broadcast.id.in_(list(finals) or [0]))
        )
    )
    return _changes(chains, chain_id, reader, block, rows)


def fold(chains: Chains, chain_id: str, block: int | None) -> tuple[int, dict[tuple[str, str], int]]:
    """The final sweeps and top-ups to fold into ``treasury_movement``: (the new cursor, their
    changes). In the order they became final, up to the first mined above ``block`` (the block
    the deposit addresses are compared at), which stays live until the watcher passes it."""
    since = folded_through(chain_id)
    pairs = list(_made_final(chain_id, since).order_by(BroadcastTransition.id).tuples())
    if not pairs:
        return since, {}
    by_id = {r.id: r for r in Broadcast.select().where(Broadcast.id.in_([b for _, b in pairs]))}
    cursor, chosen = since, []
    for transition_id, broadcast_id in pairs:
        row = by_id[int(broadcast_id)]
        if block is not None and row.mined_block is not None and int(row.mined_block) > block:
            break
        cursor = int(transition_id)
        chosen.append(row)
    return cursor, _changes(chains, chain_id, None, None, chosen)


def folded_through(chain_id: str) -> int:
    row = TreasuryFlowCursor.get_or_none(TreasuryFlowCursor.chain_id == chain_id)
    return int(row.movements_from) if row is not None else 0


def _changes(
    chains: Chains, chain_id: str, reader: Any, block: int | None, rows: list[Broadcast]
) -> dict[tuple[str, str], int]:
    if not rows:
        return {}
    payloads: dict[int, dict[str, str]] = defaultdict(dict)
    for p in SignedPayload.select(SignedPayload.broadcast, SignedPayload.tx_hash, SignedPayload.raw).where(
        SignedPayload.broadcast.in_([r.id for r in rows])
    ):
        payloads[p.broadcast_id][p.tx_hash] = p.raw
    open_rows = [r for r in rows if r.status in ("signed", "sent", "mined")]
    receipts = reader.receipts(h for r in open_rows for h in payloads.get(r.id, {})) if open_rows else {}
    reverted = {
        int(b)
        for (b,) in Sweep.select(Sweep.broadcast)
        .where(
            (Sweep.chain_id == chain_id)
            & (Sweep.status == "failed")
            & Sweep.broadcast.in_([r.id for r in rows])
        )
        .tuples()
    }
    native = chains.native_or_none(chain_id)
    tokens = {a.contract: a.code for a in chains.assets_of(chain_id) if a.contract}
    out: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        landed = _landed(row, payloads.get(row.id, {}), receipts, row.id not in reverted)
        if landed is None:
            continue
        tx_hash, number, success, fee = landed
        if block is not None and number > block:
            continue
        to, value, data = transactions.decode_raw(payloads[row.id][tx_hash])
        if row.purpose == TOPUP:
            if success and native is not None:
                out[(to_checksum_address(to), native.code)] += value
            continue
        if native is not None:
            out[(row.wallet, native.code)] -= fee
        if not success:
            continue
        if data:
            code = tokens.get(to_checksum_address(to))
            if code is not None:
                out[(row.wallet, code)] -= int.from_bytes(data[36:68], "big")
        elif native is not None:
            out[(row.wallet, native.code)] -= value
    return dict(out)


def _landed(
    row: Broadcast, payloads: dict[str, str], receipts: dict[str, Any], succeeded: bool
) -> tuple[str, int, bool, int] | None:
    """(tx hash, block, success, fee) of the payload of ``row`` in the canonical chain, or None."""
    if row.status == "final" and row.mined_tx_hash in payloads and row.mined_block is not None:
        return row.mined_tx_hash, int(row.mined_block), succeeded, int(row.fee_minor or 0)
    for tx_hash in payloads:
        receipt = receipts.get(tx_hash)
        if receipt:
            return tx_hash, int(receipt["blockNumber"]), receipt["status"] == 1, int(receipt.get("fee", 0))
    return None


def fee_wallet_owes(chain_id: str, fee_wallet: str) -> int:
    """What the fee wallet has signed and not yet paid: its gas top-ups (of the payout wallet and
    of deposit addresses for their sweeps) not mined yet: the value they send."""
    total = 0
    for row in Broadcast.select().where(
        (Broadcast.chain_id == chain_id) & (Broadcast.wallet == fee_wallet) & Broadcast.status.in_(UNMINED)
    ):
        _, value, _ = transactions.decode_call(row)
        total += value
    return total


def _made_final(chain_id: str, since: int) -> Any:
    """(move id, broadcast id) of the chain's sweeps and top-ups made final after ``since``."""
    return (
        BroadcastTransition.select(BroadcastTransition.id, BroadcastTransition.broadcast)
        .join(Broadcast, on=(BroadcastTransition.broadcast == Broadcast.id))
        .where(
            (BroadcastTransition.id > since)
            & (BroadcastTransition.to_status == "final")
            & (Broadcast.chain_id == chain_id)
            & Broadcast.purpose.in_((SWEEP, TOPUP))
        )
    )
