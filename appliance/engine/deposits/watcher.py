"""The deposit watcher: scans each chain's new blocks for transfers to registered addresses.

Inside `appliance serve`, one process per chain holds the chain's cursor lease. A pass:

1. Reorg check: the hashes of recently scanned blocks are compared with the chain's canonical
   ones, newest first. Below the highest height where they still agree (the fork point), every
   recorded transfer is RETRACTED (a CONFIRMED one announces ``deposit.retracted``) and the cursor
   goes back to the fork point, so the rescan revives the transfers the new chain holds (PENDING
   again, at their new block) and only those. The hashes kept reach deeper than the chain's
   largest ``confirmations`` (at least REORG_WINDOW blocks) and down to the node's ``finalized``
   block where it has that tag, so a reorg that could touch a deposit not yet final is seen. If
   no kept hash matches at all (a reorg deeper still), the recorded transfers below are checked
   against the canonical chain by their block hashes, newest first, down to one that still holds,
   and the rescan starts above that one (or at the first watched block when none holds).
2. Scan up to ``batch`` blocks: native transfers (outputIndex 0) and ERC20 ``Transfer`` logs
   (outputIndex = log index) to registered addresses, each recorded once on (chain, txHash,
   outputIndex). The transfers, the scanned hashes and the new cursor are ONE write transaction,
   so a restart or kill -9 resumes exactly where the last committed pass ended: nothing missed,
   nothing doubled.
3. Confirmations: a PENDING transfer whose block is the asset's ``confirmations`` deep becomes
   CONFIRMED and ``deposit.confirmed`` is written to the outbox in the same transaction.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import Any

import peewee

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.holders import instance_holder
from appliance.common.lease import SingletonLease
from appliance.engine.chain.base import BlockRef, Chain, ChainError
from appliance.engine.chain.guard import NetworkMismatch
from appliance.engine.chain.registry import Chains
from appliance.engine.db import database
from appliance.engine.deposits.service import transfer_body
from appliance.engine.ledger import book
from appliance.engine.models import (
    Broadcast,
    ChainCursor,
    Deposit,
    DepositAddress,
    ScannedBlock,
    SignedPayload,
)
from appliance.engine.outgoing.transactions import tx_hash_of
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, DEPOSIT_RETRACTED, emit

log = logging.getLogger("appliance.engine.deposits")

REORG_WINDOW = 128  # scanned block hashes kept per chain at least (more: see kept_blocks)
# The spec's amountMinor is [1-9][0-9]{0,38}: a transfer of 0 (anyone can log Transfer(x, addr, 0)
# with transferFrom) or of more than 39 digits (a uint256 holds 78) is no deposit of ours.
MAX_AMOUNT = 10**39 - 1


def admissible(value: int) -> bool:
    return 0 < value <= MAX_AMOUNT


def finalized_height(chain: Chain) -> int | None:
    """The node's ``finalized`` block number, or None: the embedded chain and nodes without the
    tag (pre-merge chains, some providers) have none, and then only kept_blocks applies."""
    w3 = getattr(chain, "w3", None)
    if w3 is None:
        return None
    try:
        return int(w3.eth.get_block("finalized")["number"])
    except Exception as exc:  # an unsupported tag is an error of the node's choosing
        log.debug("no finalized block on %s: %s", chain.chain_id, exc)
        return None


def _behind(chain: Chain, number: int) -> None:
    raise ChainError(
        f"{chain.chain_id}: the node shows no block {number}, which was scanned (a node behind, or a "
        "null answer); the reorg check looks again next pass, nothing is confirmed meanwhile"
    )


def _shown(chain: Chain, number: int) -> BlockRef:
    """The canonical block at a height already scanned. A node that does not show it is behind
    (or answered null): no evidence of a reorg, and taking it for one would retract deposits that
    still hold (and announce them confirmed twice)."""
    block = chain.block(number)
    if block is None:
        _behind(chain, number)
    assert block is not None
    return block


def _event_data(row: Deposit) -> dict[str, Any]:
    address = row.address
    return {
        **transfer_body(row),
        "accountRef": address.account_ref,
        "addressId": address.address_id,
        "address": address.address,
    }


# What the engine sends to its own deposit addresses that is no deposit: a sweep's gas top-up
# from the fee wallet (and, for completeness, any top-up or sweep). A payout is a deposit for the
# address's owner: operator A paying a customer of operator B on the same deployment credits B.
NOT_DEPOSITS = ("gas_topup", "sweep_topup", "sweep")


def _not_our_own(found: list[Any]) -> list[Any]:
    """Transfers the engine signed itself as a top-up or a sweep are no deposit: a sweep's gas
    top-up from the fee wallet to a deposit address (appliance/engine/sweeps) would otherwise
    credit the operator with the deployment's own gas. Every such payload is stored before it is
    sent (its raw bytes, whose keccak is the hash), so it is known here by its broadcast's kind.
    A payout into a deposit address is not excluded (issue 44, item 8): before, every transfer
    whose hash the engine had signed was dropped, and a payout from one operator to another's
    customer was never credited, nor swept."""
    hashes = list({entry[1] for entry in found})
    if not hashes:
        return found
    ours: set[str] = set()
    for start in range(0, len(hashes), 500):
        rows = (
            SignedPayload.select(SignedPayload.tx_hash, SignedPayload.raw)
            .join(Broadcast, on=(SignedPayload.broadcast == Broadcast.id))
            .where(
                SignedPayload.tx_hash.in_(hashes[start : start + 500]) & Broadcast.purpose.in_(NOT_DEPOSITS)
            )
            .tuples()
        )
        ours.update(h for h, raw in rows if tx_hash_of(bytes.fromhex(raw)) == h.lower())
    return [entry for entry in found if entry[1] not in ours]


class DepositWatcher:
    def __init__(self, chains: Chains, *, batch: int = 200, lease: timedelta = timedelta(seconds=30)) -> None:
        self.chains = chains
        self.batch = batch
        self.lease = lease
        self.holder = instance_holder()  # one holder for every chain's cursor

    def run_pass(self) -> int:
        """One step on every chain that has addresses; returns blocks scanned plus transfers moved."""
        handled = 0
        for chain_id, chain in self.chains.chains.items():
            # One chain's failure (a node down, a bug met on one chain's data) never ends the pass
            # for the chains after it: each is tried on its own, and retried next pass.
            try:
                handled += self._pass_on(chain_id, chain)
            except NetworkMismatch:
                pass  # refused until its node serves the configured network (logged by the guard)
            except ChainError as exc:
                log.warning("deposit watcher on %s: %s", chain_id, exc)
            except Exception as exc:
                fault = faults.classify(exc)  # a full disk, a database away: once a minute, no trace
                if fault is not None:
                    faults.report(fault, exc, f"the deposit watcher on {chain_id}")
                else:
                    log.exception("deposit watcher on %s failed; the other chains go on", chain_id)
        return handled

    def _pass_on(self, chain_id: str, chain: Chain) -> int:
        if not DepositAddress.select().where(DepositAddress.chain_id == chain_id).exists():
            return 0
        if not self._take_lease(chain_id):
            return 0
        return self._advance(chain_id, chain)

    def _take_lease(self, chain_id: str) -> bool:
        """The chain's cursor lease; the cursor starts at the first watched block when new."""

        def new_cursor() -> dict[str, int]:
            start = DepositAddress.select(DepositAddress.watch_from).where(
                DepositAddress.chain_id == chain_id
            )
            return {"next_block": min(int(r.watch_from) for r in start)}

        lease = SingletonLease.of(ChainCursor, chain_id, duration=self.lease, holder=self.holder)
        return lease.take(create=new_cursor, updated_at=clock.now())

    def _advance(self, chain_id: str, chain: Chain) -> int:
        head = chain.head().number
        handled = self._check_reorg(chain_id, chain)
        cursor = ChainCursor.get_by_id(chain_id)
        start = int(cursor.next_block)
        if start <= head:
            handled += self._scan(chain_id, chain, start, min(head, start + self.batch - 1))
        return handled + self._confirm(chain_id, head)

    # -- reorgs --------------------------------------------------------------------------------------

    def kept_blocks(self, chain_id: str) -> int:
        """How many newest scanned hashes the chain keeps at least: deeper than any of its assets'
        confirmations, so a reorg that can still change a deposit's outcome is seen."""
        deepest = max((a.confirmations for a in self.chains.assets_of(chain_id)), default=0)
        return max(REORG_WINDOW, deepest + 1)

    def _check_reorg(self, chain_id: str, chain: Chain) -> int:
        kept = (
            ScannedBlock.select()
            .where(ScannedBlock.chain_id == chain_id)
            .order_by(ScannedBlock.number.desc())
        )
        newest_row = kept.first()
        if newest_row is None:
            return 0
        canonical = chain.block(int(newest_row.number))
        if canonical is not None and canonical.hash == newest_row.hash:
            return 0  # the usual case, in one row and one call: the kept hashes may be thousands
        if canonical is None:
            _behind(chain, int(newest_row.number))
        recent = list(kept)
        fork: int | None = None
        for row in recent:
            canonical = _shown(chain, int(row.number))
            if canonical.hash == row.hash:
                fork = int(row.number)
                break
        newest = int(recent[0].number)
        if fork == newest:
            return 0
        if fork is None:
            fork = self._deep_fork(chain_id, chain, int(recent[-1].number))
        log.warning(
            "deposit watcher: reorg on %s below block %s; rescanning from %s", chain_id, newest, fork + 1
        )
        with write_transaction(database):
            moved = 0
            orphaned = Deposit.select().where(
                (Deposit.chain_id == chain_id)
                & (Deposit.block_height > fork)
                & (Deposit.status != "RETRACTED")
            )
            for row in list(orphaned):
                was_confirmed = row.status == "CONFIRMED"
                Deposit.update(status="RETRACTED", confirmed_at=None, updated_at=clock.now()).where(
                    (Deposit.id == row.id) & (Deposit.status == row.status)
                ).execute()
                if was_confirmed:
                    row.status = "RETRACTED"
                    emit(row.operator_id, DEPOSIT_RETRACTED, _event_data(row))
                    book.deposit_retracted(row)  # the credit is reversed in the same transaction
                moved += 1
            ScannedBlock.delete().where(
                (ScannedBlock.chain_id == chain_id) & (ScannedBlock.number > fork)
            ).execute()
            ChainCursor.update(next_block=fork + 1, updated_at=clock.now()).where(
                ChainCursor.chain_id == chain_id
            ).execute()
        return moved + 1

    def _deep_fork(self, chain_id: str, chain: Chain, oldest_kept: int) -> int:
        """A reorg deeper than every kept hash: the height of the newest recorded transfer whose
        block is still canonical (every block below it holds too: hashes chain), so the rescan
        starts above it. Not just below the lowest transfer that moved: the blocks in between may
        hold transfers of the new chain never seen before. When none holds, nothing scanned is
        known to hold: the rescan starts at the chain's first watched block."""
        heights = (
            Deposit.select(Deposit.block_height, Deposit.block_hash)
            .where(
                (Deposit.chain_id == chain_id)
                & (Deposit.status != "RETRACTED")
                & (Deposit.block_height < oldest_kept)
            )
            .distinct()
            .order_by(Deposit.block_height.desc())
        )
        fork: int | None = None
        for row in heights:
            canonical = _shown(chain, int(row.block_height))
            if canonical.hash == row.block_hash:
                fork = int(row.block_height)
                break
        if fork is None:
            watched = DepositAddress.select(peewee.fn.MIN(DepositAddress.watch_from)).where(
                DepositAddress.chain_id == chain_id
            )
            fork = max(0, int(watched.scalar() or 0) - 1)
        log.error(
            "deposit watcher: reorg on %s deeper than the %s kept block hashes; rescanning from block %s",
            chain_id,
            self.kept_blocks(chain_id),
            fork + 1,
        )
        return fork

    # -- scanning ------------------------------------------------------------------------------------

    def _scan(self, chain_id: str, chain: Chain, first: int, last: int) -> int:
        addresses = {
            row.address.lower(): row
            for row in DepositAddress.select().where(DepositAddress.chain_id == chain_id)
        }
        tokens = {a.contract.lower(): a for a in self.chains.assets_of(chain_id) if a.contract}
        native = self.chains.native_or_none(chain_id)  # None: a chain of token assets only
        found: list[tuple[DepositAddress, str, int, str, int, int, str]] = []
        hashes: list[tuple[int, str]] = []
        by_hash = getattr(chain, "token_transfers_at", None) if tokens else None
        for number in range(first, last + 1):
            try:
                block = chain.block(number)
                if block is None:  # the head moved back under us: the reorg check runs first next pass
                    last = number - 1
                    break
                in_block = self._native_in(chain, number, native, addresses)
                if by_hash is not None:
                    in_block += self._tokens_in(by_hash(block.hash, list(tokens)), tokens, addresses)
            except ChainError:
                if number == first:
                    raise
                # The blocks read whole so far are committed; the pass ends here and the next one
                # resumes at this block (an unreliable node still makes progress, block by block).
                last = number - 1
                break
            hashes.append((number, block.hash))
            found += in_block
        if tokens and by_hash is None and last >= first:
            # The embedded chain: one range query (it has no nodes behind one another).
            found += self._tokens_in(chain.token_transfers(first, last, list(tokens)), tokens, addresses)
        if last < first:
            return 0
        found = _not_our_own(found)
        finalized = finalized_height(chain)
        with write_transaction(database):
            for address, tx_hash, index, code, value, number, block_hash in found:
                self._record(address, tx_hash, index, code, value, number, block_hash)
            # An upsert both databases know (SQLite's INSERT OR REPLACE is refused by PostgreSQL).
            ScannedBlock.insert_many(
                [{"chain_id": chain_id, "number": n, "hash": h} for n, h in hashes],
            ).on_conflict(
                conflict_target=[ScannedBlock.chain_id, ScannedBlock.number],
                update={ScannedBlock.hash: peewee.EXCLUDED.hash},
            ).execute()
            # Hashes deeper than kept_blocks go, but none above the node's finalized block (a reorg
            # can still reach there, however long finality takes).
            prune = ScannedBlock.number <= last - self.kept_blocks(chain_id)
            if finalized is not None:
                prune &= ScannedBlock.number < finalized
            ScannedBlock.delete().where((ScannedBlock.chain_id == chain_id) & prune).execute()
            ChainCursor.update(
                next_block=last + 1, lease_until=clock.now() + self.lease, updated_at=clock.now()
            ).where(ChainCursor.chain_id == chain_id).execute()
        return last - first + 1

    @staticmethod
    def _native_in(
        chain: Chain, number: int, native: Any, addresses: dict[str, DepositAddress]
    ) -> list[tuple[DepositAddress, str, int, str, int, int, str]]:
        if native is None:  # a chain of token assets only
            return []
        return [
            (addresses[t.to.lower()], t.tx_hash, 0, native.code, t.value, number, t.block_hash)
            for t in chain.native_transfers(number)
            if t.success and t.to.lower() in addresses and admissible(t.value)
        ]

    @staticmethod
    def _tokens_in(
        logs: list[Any], tokens: dict[str, Any], addresses: dict[str, DepositAddress]
    ) -> list[tuple[DepositAddress, str, int, str, int, int, str]]:
        return [
            (
                addresses[entry.to.lower()],
                entry.tx_hash,
                entry.log_index,
                tokens[entry.contract.lower()].code,
                entry.value,
                entry.block_number,
                entry.block_hash,
            )
            for entry in logs
            if entry.to.lower() in addresses and admissible(entry.value)
        ]

    def _record(
        self,
        address: DepositAddress,
        tx_hash: str,
        index: int,
        code: str,
        value: int,
        number: int,
        block_hash: str,
    ) -> None:
        row = Deposit.get_or_none(
            (Deposit.chain_id == address.chain_id)
            & (Deposit.tx_hash == tx_hash)
            & (Deposit.output_index == index)
        )
        moment = clock.now()
        if row is None:
            Deposit.create(
                transfer_id="dtr_" + secrets.token_hex(12),
                operator=address.operator_id,
                address=address.id,
                chain_id=address.chain_id,
                tx_hash=tx_hash,
                output_index=index,
                asset_code=code,
                amount_minor=str(value),
                block_height=number,
                block_hash=block_hash,
                status="PENDING",
                detected_at=moment,
                updated_at=moment,
            )
        elif row.status == "RETRACTED" or row.block_hash != block_hash:
            # Back in the canonical chain (perhaps at another height): count its confirmations again.
            Deposit.update(
                status="PENDING",
                block_height=number,
                block_hash=block_hash,
                confirmed_at=None,
                updated_at=moment,
            ).where(Deposit.id == row.id).execute()

    # -- confirmations ---------------------------------------------------------------------------------

    def _confirm(self, chain_id: str, head: int) -> int:
        moved = 0
        for asset in self.chains.assets_of(chain_id):
            deep_enough = head - asset.confirmations + 1
            rows = list(
                Deposit.select().where(
                    (Deposit.chain_id == chain_id)
                    & (Deposit.asset_code == asset.code)
                    & (Deposit.status == "PENDING")
                    & (Deposit.block_height <= deep_enough)
                )
            )
            for row in rows:
                with write_transaction(database):
                    changed = (
                        Deposit.update(status="CONFIRMED", confirmed_at=clock.now(), updated_at=clock.now())
                        .where((Deposit.id == row.id) & (Deposit.status == "PENDING"))
                        .execute()
                    )
                    if changed:
                        row.status = "CONFIRMED"
                        emit(row.operator_id, DEPOSIT_CONFIRMED, _event_data(row))
                        book.deposit_confirmed(row)  # the operator's ledger, same transaction
                        moved += 1
        return moved
