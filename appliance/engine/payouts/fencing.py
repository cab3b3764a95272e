"""Nonce fencing: the engine signs for a wallet only while the chain's use of the wallet's nonces
is accounted for by the engine's own records.

Why: a restored backup, a copied data directory or a key used elsewhere meets a chain whose nonce
for the wallet is ahead of the engine's counter. Skipping ahead would sign again what another copy
already paid (issue 29: a restored backup paid every in-flight payout twice). So before a
reservation the chain's confirmed nonce is compared with the wallet's next nonce:

- equal or behind (our own transactions pending): sign as before;
- ahead: every nonce of the gap must be matched against the chain, by scanning the wallet's
  transactions since a block where the engine knew the wallet (its last verified head, or the
  chain height a restored backup recorded). A transaction paying exactly what an unfinished payout
  asks (same destination, asset and amount) is adopted as that payout's payload (it then confirms
  like any other); a transfer from the fee wallet to the payout wallet is adopted as a gas top-up.
  Anything else, or a gap with no known block to scan from, FENCES the wallet: signing stops with
  the reason on the wallet, on every waiting payout, in /health/ready and in /metrics, until the
  operator has looked (``appliance payout unfence``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.common.health import Check
from appliance.engine.chain.base import Chain, ChainTransaction
from appliance.engine.chain.registry import Chains
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Payout, SignedPayload, Wallet
from appliance.engine.payouts import transactions
from appliance.engine.payouts.state import transition

log = logging.getLogger("appliance.engine.payouts.fencing")

CHECKPOINTS = "chain-checkpoints.json"  # written by `appliance restore` into the new data directory
# The head recorded as "the wallet's nonces matched here" is taken this many blocks back: a
# load-balanced provider may answer the nonce from a node a few blocks behind the one that gave
# the head, and a later scan from there must not start past a transaction of the gap.
VERIFIED_MARGIN = 12


class Fenced(Exception):
    """Signing for the wallet is stopped; ``reason`` says why (stored on the wallet)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def restored_heights(data_dir: Path | None) -> dict[str, int]:
    """Chain heights (by chain id) a restored backup recorded when it was made; {} otherwise."""
    if data_dir is None:
        return {}
    path = Path(data_dir) / CHECKPOINTS
    if not path.is_file():
        return {}
    heights = json.loads(path.read_text()).get("chainHeights", {})
    # The same margin as a verified head: a provider behind by a few blocks answered the height.
    return {str(k): max(0, int(v) - VERIFIED_MARGIN) for k, v in heights.items() if v is not None}


def wallet_row(chain_id: str, address: str) -> Wallet | None:
    return Wallet.get_or_none((Wallet.chain_id == chain_id) & (Wallet.address == address))


def fence(chain_id: str, address: str, reason: str) -> None:
    """Stop signing for the wallet (a write transaction of its own)."""
    with write_transaction(database):
        row = wallet_row(chain_id, address)
        if row is None:
            Wallet.create(chain_id=chain_id, address=address, next_nonce=0, fence_reason=reason)
        elif row.fence_reason is None:
            Wallet.update(fence_reason=reason).where(Wallet.id == row.id).execute()
    log.error("signing stopped for %s on %s: %s", address, chain_id, reason)


def fenced_wallets() -> list[Wallet]:
    return list(Wallet.select().where(Wallet.fence_reason.is_null(False)))


def fencing_probe() -> Check:
    """Readiness: fails while any wallet is fenced (an operator must look: the engine signs
    nothing for it), naming each wallet and why."""
    with database.connection_context():
        fenced = fenced_wallets()
    if not fenced:
        return Check("pass")
    return Check(
        "fail",
        detail="; ".join(f"{w.address} on {w.chain_id}: {w.fence_reason}" for w in fenced),
        data={"fenced": [{"chainId": w.chain_id, "wallet": w.address} for w in fenced]},
    )


def fenced_gauge() -> Iterator[Metric]:
    gauge = GaugeMetricFamily(
        "appliance_payout_wallet_fenced",
        "1 for each wallet whose signing is stopped by the nonce fencing (an operator must look).",
        labels=["chain", "wallet"],
    )
    with database.connection_context():
        for wallet in fenced_wallets():
            gauge.add_metric([wallet.chain_id, wallet.address], 1)
    yield gauge


@dataclasses.dataclass
class Fencing:
    chains: Chains
    restored: dict[str, int]

    def check(self, chain: Chain, chain_id: str, address: str, role: str) -> int:
        """Before a reservation for ``address``: returns the chain's confirmed nonce when signing
        may go on (after adopting what the chain shows of the engine's own kind); raises Fenced."""
        row = wallet_row(chain_id, address)
        if row is not None and row.fence_reason:
            raise Fenced(row.fence_reason)
        chain_nonce = chain.nonce(address)
        known = int(row.next_nonce) if row is not None else 0
        if chain_nonce <= known:
            return chain_nonce
        self._reconcile(chain, chain_id, address, role, row, known, chain_nonce)
        return chain_nonce

    def start_of(self, chain_id: str, address: str) -> int | None:
        return self._start(chain_id, wallet_row(chain_id, address))

    def _start(self, chain_id: str, row: Wallet | None) -> int | None:
        """A block below every transaction of the gap: any such bound will do, the latest is the
        shortest scan. A verified head: the gap's nonces were unused there. A restored backup's
        height: the gap's transactions were signed after the backup's snapshot."""
        starts = [self.restored.get(chain_id)]
        if row is not None:
            starts.append(row.verified_block)
        known = [int(s) for s in starts if s is not None]
        return max(known) if known else None

    def _reconcile(
        self, chain: Chain, chain_id: str, address: str, role: str, row: Wallet | None, known: int, upto: int
    ) -> None:
        gap = f"nonces {known}..{upto - 1}" if upto - known > 1 else f"nonce {known}"
        start = self._start(chain_id, row)
        if start is None:
            reason = (
                f"the chain shows {gap} of {address} used, and this engine has no record of signing "
                "them nor a block since which to look them up (a copied data directory, or the key "
                "used elsewhere); nothing more is signed for this wallet until an operator checks"
            )
            fence(chain_id, address, reason)
            raise Fenced(reason)
        head = chain.head().number
        found = {tx.nonce: tx for tx in chain.account_transactions(address, start, head) if tx.nonce >= known}
        missing = [n for n in range(known, upto) if n not in found]
        if missing:
            # A provider behind the head or a reorg in between: look again later, sign nothing now.
            raise Fenced(
                f"the chain shows {gap} of {address} used but its transactions since block {start} "
                f"do not include nonce {missing[0]} yet; looking again before signing anything"
            )
        with write_transaction(database):
            adopted = [self._adopt(chain_id, address, role, found[n], head) for n in range(known, upto)]
            unknown = [
                tx for tx, ok in zip((found[n] for n in range(known, upto)), adopted, strict=True) if not ok
            ]
            if not unknown:
                current = locked(
                    Wallet.select().where((Wallet.chain_id == chain_id) & (Wallet.address == address))
                ).first()
                if current is None:
                    Wallet.create(chain_id=chain_id, address=address, next_nonce=upto, verified_block=head)
                else:
                    Wallet.update(next_nonce=max(int(current.next_nonce), upto), verified_block=head).where(
                        Wallet.id == current.id
                    ).execute()
        if unknown:
            tx = unknown[0]
            reason = (
                f"nonce {tx.nonce} of {address} was used on chain by {tx.tx_hash} (block "
                f"{tx.block_number}), which matches nothing this engine signed or was asked to pay; "
                "nothing more is signed for this wallet until an operator checks"
            )
            fence(chain_id, address, reason)
            raise Fenced(reason)
        log.warning("%s on %s: %s found on chain and matched to the engine's records", address, chain_id, gap)

    def _adopt(self, chain_id: str, address: str, role: str, tx: ChainTransaction, head: int) -> bool:
        """Record ``tx`` as the engine's own (inside the caller's write transaction) when it pays an
        unfinished payout exactly, or is a gas top-up; False when it matches nothing."""
        if role == "fee":
            if tx.data or tx.to is None or tx.value <= 0:
                return False
            _store(chain_id, address, tx, None, "gas_topup", head)
            return True
        payout = self.matching_payout(chain_id, tx)
        if payout is None:
            return False
        broadcast = _store(chain_id, address, tx, payout.id, "payout", head)
        transition(payout, "SIGNED", signed_payload_digest=broadcast.digest, tx_hash=broadcast.tx_hash)
        transition(
            payout,
            "BROADCAST",
            tx_hash=broadcast.tx_hash,
            reason=f"found on chain at nonce {tx.nonce} ({tx.tx_hash}): signed by another copy of "
            "this data directory; confirmed like any other, never signed again",
        )
        return True

    def matching_payout(self, chain_id: str, tx: ChainTransaction) -> Payout | None:
        """The oldest REQUESTED payout that ``tx`` pays exactly (destination, asset, amount)."""
        if tx.to is None:
            return None
        if not tx.data and tx.value > 0:
            asset = self.chains.native(chain_id)
            destination, amount = tx.to, tx.value
        elif tx.value == 0 and len(tx.data) == 68 and tx.data[:4] == transactions.TRANSFER_SELECTOR:
            found = [
                a
                for a in self.chains.assets_of(chain_id)
                if a.contract and a.contract.lower() == tx.to.lower()
            ]
            if not found:
                return None
            asset = found[0]
            destination = "0x" + tx.data[16:36].hex()
            amount = int.from_bytes(tx.data[36:68], "big")
        else:
            return None
        candidates = (
            Payout.select()
            .where(
                (Payout.chain_id == chain_id)
                & (Payout.status == "REQUESTED")
                & (Payout.asset == asset.code)
                & (Payout.amount_minor == str(amount))
            )
            .order_by(Payout.id)
        )
        for payout in candidates:
            if str(payout.destination).lower() == destination.lower():
                return payout
        return None


def _store(
    chain_id: str, address: str, tx: ChainTransaction, payout_id: int | None, purpose: str, head: int
) -> Broadcast:
    decoded = transactions.fees_of(tx.raw)
    moment = clock.now()
    broadcast = Broadcast.create(
        payout=payout_id,
        purpose=purpose,
        chain_id=chain_id,
        wallet=address,
        nonce=tx.nonce,
        raw=tx.raw.hex(),
        digest=transactions.digest(tx.raw),
        tx_hash=tx.tx_hash,
        max_fee_per_gas=str(decoded.max_fee_per_gas),
        max_priority_fee_per_gas=str(decoded.max_priority_fee_per_gas),
        gas_limit=decoded.gas,
        status="mined",  # mined already: not in flight (the balance shows it); confirm() records where
        signed_block=tx.block_number,
        created_at=moment,
        updated_at=moment,
    )
    SignedPayload.create(
        broadcast=broadcast,
        tx_hash=tx.tx_hash,
        digest=broadcast.digest,
        raw=broadcast.raw,
        max_fee_per_gas=broadcast.max_fee_per_gas,
        created_at=moment,
    )
    return broadcast
