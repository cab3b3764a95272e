"""Nonce fencing: the engine signs for a wallet only while the chain's use of the wallet's nonces
is accounted for by the engine's own records.

Why: a restored backup, a copied data directory or a key used elsewhere meets a chain whose nonce
for the wallet is ahead of the engine's counter, or a node's pool holding transactions at nonces the
engine has not reserved. Skipping ahead would sign again what another copy already paid (issue 29:
a restored backup paid every in-flight payout twice); signing at a nonce another copy's transaction
still waits at in the pool, then bumping the fee, evicts it and pays twice while the payout it
carried lands at the next nonce (issue 43, finding 4). So before a reservation:

- the chain's confirmed nonce (``latest``) is compared with the wallet's next nonce. Ahead: every
  nonce of the gap is matched against the chain, by scanning the wallet's transactions since a
  block where the engine knew the wallet (its last verified head, or the chain height a restored
  backup recorded). Only a transaction whose exact signed bytes the engine holds (a stored payload
  with the same hash) is taken as its own (issue 44, item 5). Anything else, or a gap with no known
  block to scan from, FENCES the wallet: signing stops with the reason on the wallet, on every
  waiting payout, in /health/ready and in /metrics; each such transaction is a
  ``foreign_transaction`` row waiting for an administrator's decision (``appliance payout adopt``
  for a payout it pays exactly, or ``appliance payout reject-foreign``: a foreign outflow, which
  reconcile keeps as a finding), or ``appliance payout unfence``.
- then the ``pending`` nonce: above the wallet's next nonce, the node's pool holds transactions at
  nonces the engine never reserved (another copy's, in flight). Nothing is signed for the wallet
  (it waits, ``Pending``) until they are mined and matched as above: the pool's transactions
  cannot be read whole from every node, a block can.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common.db import write_transaction
from appliance.common.health import Check
from appliance.engine.chain.base import Chain, ChainTransaction
from appliance.engine.chain.registry import Chains
from appliance.engine.db import database
from appliance.engine.models import ForeignTransaction, SignedPayload, Wallet
from appliance.engine.outgoing import transactions

log = logging.getLogger("appliance.engine.payouts.fencing")

CHECKPOINTS = "chain-checkpoints.json"  # written by `appliance restore` into the new data directory
VERIFIED_MARGIN = transactions.VERIFIED_MARGIN  # for the callers that scan from a reservation
# Blocks of a wallet's history read per pipeline pass while a nonce gap is matched: each block is
# one eth_getBlockByNumber (and one call per transaction of the wallet); at ~50 ms a call on a
# remote provider, 128 blocks fit one 10 s lease. The block reached is kept (wallet.scan_block).
SCAN_BLOCKS = 128


class Fenced(Exception):
    """Signing for the wallet is stopped; ``reason`` says why (stored on the wallet)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Scanning(Fenced):
    """Signing for the wallet waits while its history on chain is read (not fenced: the next pass
    goes on from the block reached)."""


class Pending(Scanning):
    """Signing for the wallet waits: the node's pool holds transactions of the wallet at nonces the
    engine has not reserved (not fenced: once mined they are matched like any gap)."""


def _pool_reason(address: str, first: int, pending: int, *, restored: bool) -> str:
    """Why nothing is signed while the node's pool holds the wallet's transactions from ``first``
    on: not reserved by this engine, or reserved by the host a backup was taken from."""
    gap = f"nonces {first}..{pending - 1}" if pending - first > 1 else f"nonce {first}"
    held = f"the node's pool holds transactions of {address} at {gap}"
    if restored:
        return f"restored from a backup: {held} not yet mined; nothing new is signed for this wallet {_UNTIL}"
    return (
        f"{held}, which this engine did not reserve (another copy of the data directory, or the key "
        f"used elsewhere); nothing is signed for this wallet {_UNTIL}"
    )


_UNTIL = "until they are mined and matched to this engine's records"


def _progress(reached: int, head: int, gap: str) -> str:
    return (
        f"checking the wallet's history on chain: block {reached} of {head} ({gap} used on chain, "
        "being matched to this engine's records); nothing is signed for this wallet until it is done"
    )


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
        row = transactions.locked_wallet(chain_id, address)
        if row.fence_reason is None:
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
    # Wallets whose history this pass has read already: at most SCAN_BLOCKS blocks per pass each,
    # however many of their payouts the pass steps.
    _scanned: set[tuple[str, str]] = dataclasses.field(default_factory=set)

    def new_pass(self) -> None:
        self._scanned.clear()

    def check(self, chain: Chain, chain_id: str, address: str, role: str) -> int:
        """Before a reservation for ``address``: returns the chain's confirmed nonce when signing
        may go on (the chain's use of the wallet's nonces, mined and pending, accounted for);
        raises Fenced (or Scanning, Pending: wait)."""
        row = wallet_row(chain_id, address)
        if row is not None and row.fence_reason:
            raise Fenced(row.fence_reason)
        chain_nonce = chain.nonce(address)
        known = int(row.next_nonce) if row is not None else 0
        if chain_nonce > known:
            self._reconcile(chain, chain_id, address, role, row, known, chain_nonce)
            known = chain_nonce
        # After the mined nonce, the pool's: a transaction of another copy waiting there at the
        # nonce this engine would take next is replaced by a fee bump, and the payout it carried
        # is paid again at the following nonce (issue 43, finding 4).
        pending = chain.pending_nonce(address)
        if pending > known:
            raise Pending(_pool_reason(address, known, pending, restored=False))
        if pending > chain_nonce and self._unverified_since_restore(chain_id, address):
            # Restored: the pool's transactions at the engine's own reserved nonces may be the
            # dead host's replacements of them; nothing new is signed until they are mined and
            # so matched (a reservation then records the wallet verified after the restore).
            raise Pending(_pool_reason(address, chain_nonce, pending, restored=True))
        return chain_nonce

    def _unverified_since_restore(self, chain_id: str, address: str) -> bool:
        """Whether the data directory was restored from a backup and the wallet's nonces have not
        been seen to match the chain since: its verified block is not above the backup's height
        (equal: verified at the very head the backup recorded, which may have been before it)."""
        height = self.restored.get(chain_id)
        if height is None:
            return False
        row = wallet_row(chain_id, address)
        return row is None or row.verified_block is None or int(row.verified_block) <= height

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
        """Match the gap ``known..upto-1`` against the wallet's history on chain, at most
        SCAN_BLOCKS blocks per pass: a restore from an old backup is thousands of blocks, each an
        RPC call or more, which one step (inside one lease) cannot read. The block reached is kept
        on the wallet (``scan_block``) and what was found so far adopted, so the next pass resumes
        there; signing waits (Scanning) until the gap is matched."""
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
        cursor = int(row.scan_block) if row is not None and row.scan_block is not None else None
        head = chain.head().number
        if (chain_id, address) in self._scanned:  # this pass read its blocks already
            raise Scanning(_progress(cursor if cursor is not None else start, head, gap))
        self._scanned.add((chain_id, address))
        # Resuming, a margin is read again: a reorg since the last pass may have moved a
        # transaction of the gap into a block at or just below the one reached.
        begin = start if cursor is None else max(start, cursor - VERIFIED_MARGIN)
        end = min(head, begin + SCAN_BLOCKS - 1)
        found: dict[int, ChainTransaction] = {}
        for tx in chain.account_transactions(address, begin, end):
            if tx.nonce >= known:
                found.setdefault(tx.nonce, tx)
        # The gap's transactions in nonce order, as far as they are contiguous.
        run: list[ChainTransaction] = []
        while known + len(run) < upto and known + len(run) in found:
            run.append(found[known + len(run)])
        if any(known + len(run) < n < upto for n in found):
            # A later nonce without the one before it: a provider mixing nodes. Read again.
            raise Scanning(
                f"the chain shows {gap} of {address} used but its transactions since block {begin} "
                f"do not include nonce {known + len(run)} yet; looking again before signing anything"
            )
        complete = known + len(run) == upto
        unknown: ChainTransaction | None = None
        with write_transaction(database):
            current = transactions.locked_wallet(chain_id, address)
            now_known = int(current.next_nonce)
            now_cursor = current.scan_block
            if now_known != known or now_cursor != cursor or current.fence_reason:
                # Compare-and-set: another worker (or node) moved the scan on meanwhile.
                raise Scanning(_progress(now_cursor if now_cursor is not None else start, head, gap))
            reached = known
            for position, tx in enumerate(run):
                if not held(tx):
                    unknown = tx
                    # Each transaction of the gap from here waits for an administrator's decision.
                    for foreign in run[position:]:
                        record_foreign(chain_id, address, role, foreign)
                    break
                reached = tx.nonce + 1
            changes: dict[str, object] = {"next_nonce": reached}
            if unknown is not None:  # fenced with what it recorded, in the same transaction
                changes["fence_reason"] = _unknown_reason(unknown, address)
            if complete and unknown is None:
                changes.update(scan_block=None, verified_block=max(0, end - VERIFIED_MARGIN))
            else:
                changes["scan_block"] = end + 1
            Wallet.update(**changes).where(Wallet.id == current.id).execute()
        if unknown is not None:
            reason = _unknown_reason(unknown, address)
            log.error("signing stopped for %s on %s: %s", address, chain_id, reason)
            raise Fenced(reason)
        if not complete:
            if end >= head:
                # Read up to the head and still short: a provider behind, or a reorg in between.
                raise Scanning(
                    f"the chain shows {gap} of {address} used but its transactions since block {start} "
                    f"do not include nonce {known + len(run)} yet; looking again before signing anything"
                )
            raise Scanning(_progress(end + 1, head, gap))
        log.warning("%s on %s: %s found on chain and matched to the engine's records", address, chain_id, gap)


def _unknown_reason(tx: ChainTransaction, address: str) -> str:
    return (
        f"nonce {tx.nonce} of {address} was used on chain by {tx.tx_hash} (block {tx.block_number}), "
        "whose signed bytes this engine does not hold; nothing more is signed for this wallet until "
        f"an administrator decides: {DECIDE}"
    )


DECIDE = (
    "`appliance payout adopt --chain-id C --tx HASH --payout ID` (it pays that payout exactly) or "
    "`appliance payout reject-foreign --chain-id C --tx HASH` (a foreign outflow)"
)


def held(tx: ChainTransaction) -> bool:
    """Whether the engine holds ``tx``'s exact signed bytes (a payload it stored before sending):
    the chain's hash is keccak of the bytes the chain holds, checked against the stored bytes, so a
    row naming the hash alone is not enough."""
    if transactions.tx_hash_of(tx.raw) != tx.tx_hash.lower():
        return False
    stored = SignedPayload.select(SignedPayload.raw).where(SignedPayload.tx_hash == tx.tx_hash)
    return any(bytes.fromhex(p.raw) == tx.raw for p in stored)


def record_foreign(chain_id: str, address: str, role: str, tx: ChainTransaction) -> ForeignTransaction:
    """A transaction at the wallet's nonce that the engine did not sign, waiting for an
    administrator's decision (inside the caller's write transaction; once per transaction)."""
    row = ForeignTransaction.get_or_none(
        (ForeignTransaction.chain_id == chain_id) & (ForeignTransaction.tx_hash == tx.tx_hash)
    )
    if row is not None:
        return row
    return ForeignTransaction.create(  # type: ignore[no-any-return]
        chain_id=chain_id,
        wallet=address,
        role=role,
        nonce=tx.nonce,
        tx_hash=tx.tx_hash,
        block_number=tx.block_number,
        raw=tx.raw.hex(),
        status="pending",
    )


def fence_foreign(chain_id: str, address: str, role: str, tx: ChainTransaction, reason: str) -> None:
    """Fence the wallet for ``tx`` (a foreign transaction at a nonce the engine reserved) and keep
    it for an administrator's decision."""
    with write_transaction(database):
        record_foreign(chain_id, address, role, tx)
    fence(chain_id, address, reason)


def pays(chains: Chains, chain_id: str, raw: bytes) -> tuple[str, str, int] | None:
    """(asset code, destination, amount) that signed bytes pay: a data-less native transfer or a
    configured token's transfer(address,uint256); None for anything else."""
    to, value, data = transactions.decode_raw(raw.hex())
    if not data and value > 0:
        return chains.native(chain_id).code, to, value
    if value == 0 and len(data) == 68 and data[:4] == transactions.TRANSFER_SELECTOR:
        for asset in chains.assets_of(chain_id):
            if asset.contract and asset.contract.lower() == to.lower():
                return asset.code, "0x" + data[16:36].hex(), int.from_bytes(data[36:68], "big")
    return None
