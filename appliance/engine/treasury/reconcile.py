"""Reconciliation: the custody wallets compared with the chains and with the engine's records
(docs/engine-treasury.md, "Reconciliation").

Findings (critical ones fail the ``treasury`` readiness check):

- ``unknown_outflow`` (critical): a custody address used a nonce for which the engine stored no
  signed payload (Broadcast at that wallet and nonce), or a nonce the engine reserved was used by
  a transaction that is none of the payloads it signed there. The transaction is looked up (its
  value, or the token amount it transfers) where the node keeps old state. A reserved nonce whose
  payloads' receipts are missing is looked up again by the transaction at the nonce (a node a
  block or two behind another of the provider's answers no receipt yet): the engine's own payload
  there is no finding, and neither is a nonce used within the chain's confirmations whose
  transaction this node does not show yet (looked at again next run). The chain keeps the nonce
  for ever, so this finding stays until an administrator acknowledges it, or until a later run
  finds the nonce used by a payload the engine signed there: the reconciler then resolves it,
  with that reason, and keeps the row (``resolved_at``, ``resolution``).
- ``balance_mismatch`` (critical): a deposit address holds less than the transfers recorded to
  it, at the last block the deposit watcher scanned.
- ``deposit_not_recorded`` (critical): a deposit address holds more than the transfers recorded to
  it at that block: money arrived that the watcher did not record (no operator was told).
- ``payout_not_on_chain`` (critical): a COMPLETED payout whose transaction the canonical chain
  does not hold (or holds as reverted).
- ``unexplained_outflow``, ``flow_mismatch``, ``allowance``, ``deposit_out_of_range``
  (critical): the custody wallets' flows since the last run (treasury/flows.py): token transfers
  out that use no nonce of the wallet, a balance below what its flows explain, a spender's
  allowance, a transfer to a deposit address above amountMinor's 39 digits.
- ``solvency_shortfall`` (critical): operators are owed more of an asset than custody holds
  (treasury/solvency.py); the run's ``solvency`` section shows it per asset.
- ``stuck_payout`` (critical): a payout's transaction not mined after STUCK_PAYOUT_CRITICAL_AFTER
  (later nonces of the payout wallet queue behind it).
- ``stuck_transaction``: a signed or sent transaction not mined after STUCK_AFTER.
- ``unswept``: a deposit address holding, above the asset's sweep minimum, a confirmed deposit
  older than UNSWEPT_AFTER that no sweep covered.
- ``low_balance``: the payout wallet (or the fee wallet, native asset) below the asset's
  ``low_balance_minor``, or below what its open payouts still need.

A chain that cannot be read keeps its previous findings (a run is all of a chain or none of it).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from eth_utils import to_checksum_address

from appliance.common import clock
from appliance.common.compiled import insert_if_new
from appliance.common.db import write_transaction
from appliance.engine.chain.base import ChainError, ChainTransaction, FeeQuote
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import (
    Broadcast,
    ChainCursor,
    Payout,
    SignedPayload,
    TreasuryBalance,
    TreasuryFinding,
    TreasuryNonceCursor,
    TreasuryRun,
)
from appliance.engine.outgoing.transactions import VERIFIED_MARGIN, transaction_at_nonce
from appliance.engine.sweeps.movements import fold
from appliance.engine.sweeps.planning import minimum as sweep_minimum
from appliance.engine.sweeps.planning import unswept_deposits
from appliance.engine.treasury.bulk import BulkReader
from appliance.engine.treasury.flows import FlowRun, fold_movements
from appliance.engine.treasury.positions import (
    Position,
    chain_positions,
    deposit_addresses,
    holding,
    wallet_addresses,
)
from appliance.engine.treasury.solvency import AssetSolvency, chain_solvency, landed_payouts

log = logging.getLogger("appliance.engine.treasury")

# The kinds of finding in the order findings are listed (critical first); CRITICAL is their head.
CRITICAL_KINDS = (
    "solvency_shortfall",
    "unknown_outflow",
    "unexplained_outflow",
    "flow_mismatch",
    "allowance",
    "deposit_out_of_range",
    "stuck_payout",
    "balance_mismatch",
    "payout_not_on_chain",
    "deposit_not_recorded",
)
KINDS = (*CRITICAL_KINDS, "stuck_transaction", "unswept", "low_balance")
CRITICAL = frozenset(CRITICAL_KINDS)
# Findings of money gone: they stay until an administrator acknowledges them (the chain keeps them).
STICKY = frozenset({"unknown_outflow", "unexplained_outflow", "flow_mismatch", "deposit_out_of_range"})
STUCK_AFTER = timedelta(minutes=10)
# A payout's transaction not mined after this is critical: every later nonce of the payout wallet
# (every other operator's payouts) queues behind it, and an hour is well past what a replacement
# at the fee ceiling takes on any configured chain (docs/engine-treasury.md).
STUCK_PAYOUT_CRITICAL_AFTER = timedelta(hours=1)
UNSWEPT_AFTER = timedelta(hours=1)
# COMPLETED payouts are checked against the chain for this long after they completed (a reorg
# deeper than any asset's confirmations, or a node that lost them).
COMPLETED_RECHECK = timedelta(days=7)
TRANSFER = bytes.fromhex("a9059cbb")  # transfer(address,uint256)
RUN = "reconcile"


@dataclasses.dataclass(frozen=True)
class Finding:
    kind: str
    chain_id: str
    asset_code: str
    address: str
    expected: int
    actual: int
    detail: str
    ref: str = ""  # what makes the finding distinct (a nonce, a transaction)

    @property
    def key(self) -> str:
        return finding_key(self.kind, self.chain_id, self.asset_code, self.address, self.ref)


def finding_key(kind: str, chain_id: str, asset_code: str, address: str, ref: str) -> str:
    if kind == "unknown_outflow":  # one per (address, nonce), whatever asset it turns out to move
        return ":".join((kind, chain_id, address, ref))
    return ":".join((kind, chain_id, asset_code, address, ref))[:255]


def finding_body(row: TreasuryFinding) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "chainId": row.chain_id,
        "assetCode": row.asset_code,
        "address": row.address,
        "expectedMinor": row.expected_minor,
        "actualMinor": row.actual_minor,
        "detail": row.detail,
    }


@dataclasses.dataclass
class ChainRun:
    """The reconciliation of one chain: findings and the wallets' positions."""

    chains: Chains
    chain_id: str
    custody: CustodyKeys | None
    reader: BulkReader
    findings: list[Finding] = dataclasses.field(default_factory=list)
    wallets: list[tuple[Position, bool]] = dataclasses.field(default_factory=list)
    # Unknown outflows found before: their transaction is not looked up again.
    known: dict[str, TreasuryFinding] = dataclasses.field(default_factory=dict)
    # Unknown outflows found before that this run found explained: finding key → why.
    explained: dict[str, str] = dataclasses.field(default_factory=dict)
    flows: FlowRun | None = None
    solvency: list[AssetSolvency] = dataclasses.field(default_factory=list)
    # Moved in the store's transaction: each address's nonces checked, the sweeps folded in.
    nonce_cursors: dict[str, int] = dataclasses.field(default_factory=dict)
    folded: tuple[int, dict[tuple[str, str], int]] | None = None
    rows_read: int = 0  # broadcast rows the nonce check read (a test's measure of bounded work)

    def run(self) -> None:
        chain = self.chains.chains[self.chain_id]
        self.known = {
            r.key: r
            for r in TreasuryFinding.select().where(
                (TreasuryFinding.chain_id == self.chain_id) & (TreasuryFinding.kind == "unknown_outflow")
            )
        }
        head = chain.head().number
        self._wallets()
        self.flows = FlowRun(self.chains, self.chain_id, self.custody, self.reader)
        try:
            self.flows.run(head)
        except ChainError as exc:
            # A node without the window's state or logs (pruned, a provider's log limits): the
            # flows wait for the next run, from the same cursor; the rest is reconciled.
            log.warning("treasury: %s flows not read this run: %s", self.chain_id, exc)
            self.flows = None
        for f in self.flows.findings if self.flows is not None else []:
            self.findings.append(
                Finding(f.kind, self.chain_id, f.asset_code, f.address, f.expected, f.actual, f.detail, f.ref)
            )
        self._deposits(head)
        self._nonces(head)
        self._completed()
        self._solvency()

    # -- payout and fee wallets ------------------------------------------------------------------------

    def _wallets(self) -> None:
        for position in chain_positions(
            self.chains, self.chain_id, self.custody, self.reader, deposits=False
        ):
            asset = self.chains.find(self.chain_id, position.asset_code)
            threshold = asset.low_balance_minor if asset else None
            if position.role == "fee" and (asset is None or asset.kind != "native"):
                threshold = None  # the fee wallet pays gas only
            low = threshold is not None and position.on_chain < threshold
            short = position.on_chain < position.expected
            self.wallets.append((position, low or short))
            if low or short:
                needs = max(position.expected, threshold or 0)
                why = (
                    f"below the low-balance alarm of {threshold}"
                    if low
                    else "less than its open payouts still need"
                )
                self.findings.append(
                    Finding(
                        "low_balance",
                        self.chain_id,
                        position.asset_code,
                        position.address,
                        needs,
                        position.on_chain,
                        f"the {position.role} wallet holds {position.on_chain}, {why} "
                        f"(open payouts need {position.expected})",
                    )
                )

    # -- solvency --------------------------------------------------------------------------------------

    def _solvency(self) -> None:
        """What the operators are owed against what custody holds, per asset (treasury/solvency.py):
        the wallets as _wallets read them at the head, the deposit addresses read at the head."""
        assets = self.chains.assets_of(self.chain_id)
        deposits = [(address, asset) for address in deposit_addresses(self.chain_id) for asset in assets]
        balances = self.reader.balances([holding(address, asset) for address, asset in deposits])
        held = [p for p, _ in self.wallets] + [
            Position(self.chain_id, asset.code, "deposit", address, amount, 0)
            for (address, asset), amount in zip(deposits, balances, strict=True)
        ]
        landed = landed_payouts(self.chain_id, self.reader)
        self.solvency = chain_solvency(self.chain_id, [a.code for a in assets], held, landed)
        for item in self.solvency:
            if item.shortfall > 0:
                self.findings.append(
                    Finding(
                        "solvency_shortfall",
                        self.chain_id,
                        item.asset_code,
                        "",
                        item.owed,
                        item.held,
                        f"operators are owed {item.owed} (available balances {item.owed - item.in_flight}, "
                        f"payouts in flight {item.in_flight}) and custody holds {item.held}: short by "
                        f"{item.shortfall}; the deployment's own costs so far are {item.costs}; "
                        + _exposure_text(item.exposures),
                    )
                )

    # -- deposit addresses -----------------------------------------------------------------------------

    def _deposits(self, head: int) -> None:
        cursor = ChainCursor.get_or_none(ChainCursor.chain_id == self.chain_id)
        if cursor is None:
            return  # the watcher never ran here: no address was handed out before a scan
        scanned = min(int(cursor.next_block) - 1, head)
        if self.reader.url is None and scanned < head:
            # The embedded chain answers only at its head: compare once the watcher has caught up.
            log.info("treasury: %s deposits compared once the watcher reaches the head", self.chain_id)
            return
        block = None if self.reader.url is None else scanned
        try:
            rows = chain_positions(self.chains, self.chain_id, None, self.reader, block)  # deposits only
        except ChainError as exc:
            if block is None or block >= head:
                raise
            # A node that prunes old state (a full node keeps about 128 blocks) cannot answer at a
            # block a lagging watcher scanned long ago: compared again once it has caught up.
            log.warning("treasury: %s deposits not compared at block %s: %s", self.chain_id, block, exc)
            return
        if self.reader.url is None and self.chains.chains[self.chain_id].head().number != head:
            return  # the embedded chain mined while it was read: the watcher is behind again
        # What this run's flows named at deposit addresses (stored with this run's findings):
        # those findings, not also a mismatch.
        named = self.flows.deposit_outflows if self.flows is not None else {}
        rows = [
            dataclasses.replace(p, expected=p.expected + named.get((p.address, p.asset_code), 0))
            for p in rows
        ]
        for p in rows:
            if p.on_chain > p.expected:
                self.findings.append(
                    Finding(
                        "deposit_not_recorded",
                        self.chain_id,
                        p.asset_code,
                        p.address,
                        p.expected,
                        p.on_chain,
                        f"the address holds {p.on_chain - p.expected} more than the transfers "
                        f"recorded to it at block {scanned} (the last block the deposit watcher scanned)",
                    )
                )
            elif p.on_chain < p.expected:
                self.findings.append(
                    Finding(
                        "balance_mismatch",
                        self.chain_id,
                        p.asset_code,
                        p.address,
                        p.expected,
                        p.on_chain,
                        f"the address holds {p.expected - p.on_chain} less than the transfers recorded "
                        f"to it at block {scanned}",
                    )
                )
        held = {(p.address, p.asset_code): p.on_chain for p in rows}
        self._unswept(held)
        self.folded = fold(self.chains, self.chain_id, block)

    def _unswept(self, held: dict[tuple[str, str], int]) -> None:
        """A deposit address holding, for more than UNSWEPT_AFTER, a confirmed deposit that no
        sweep has covered (none planned after it was confirmed, none open), and more than the
        asset's sweep minimum (what a sweep would move)."""
        cutoff = clock.now() - UNSWEPT_AFTER
        fees: FeeQuote | None = None
        for (address, code), since, total in unswept_deposits(self.chain_id, cutoff):
            on_chain = held.get((address, code), 0)
            asset = self.chains.find(self.chain_id, code)
            if asset is None or on_chain <= 0:
                continue
            if asset.kind == "native" and asset.sweep_min_minor is None and fees is None:
                fees = self.chains.chains[self.chain_id].fee_quote()
            least = sweep_minimum(asset, fees)
            if on_chain <= least:
                continue
            self.findings.append(
                Finding(
                    "unswept",
                    self.chain_id,
                    code,
                    address,
                    0,
                    on_chain,
                    f"confirmed deposits of {total} wait at the deposit address since {clock.iso(since)} "
                    f"and no sweep moved them to the payout wallet (it holds {on_chain}, above the "
                    f"sweep minimum of {least}): are sweeps off (sweep_interval_seconds), or waiting "
                    "(the fee wallet unfunded, the fee above max_fee_per_gas)?",
                )
            )

    # -- nonces: what left the custody addresses -----------------------------------------------------

    def _nonces(self, head: int) -> None:
        """Every nonce a custody address used since the last run (a cursor per address,
        ``treasury_nonce_cursor``) must be a reservation of the engine's, and every reservation
        still in flight is looked at: a run reads the broadcasts of the nonces used since the
        last run and those in flight, not every broadcast the deployment ever made. (A reorg
        that gives a reservation's nonce back moves it to signed again: in flight, looked at.)"""
        addresses = [address for _, address in wallet_addresses(self.custody)]
        addresses += deposit_addresses(self.chain_id)
        addresses = list(dict.fromkeys(addresses))
        used = dict(zip(addresses, self.reader.nonces(addresses, head), strict=True))
        checked = {
            a: int(n)
            for a, n in TreasuryNonceCursor.select(
                TreasuryNonceCursor.address, TreasuryNonceCursor.checked_below
            )
            .where(TreasuryNonceCursor.chain_id == self.chain_id)
            .tuples()
        }
        reserved: dict[str, dict[int, Broadcast]] = defaultdict(dict)
        for address, count in used.items():
            start = checked.get(address, 0)
            if start >= count:
                continue
            rows = Broadcast.select().where(
                (Broadcast.chain_id == self.chain_id)
                & (Broadcast.wallet == address)
                & (Broadcast.nonce >= start)
            )
            for row in rows:
                self.rows_read += 1
                reserved[row.wallet][int(row.nonce)] = row
            mine = reserved.get(address, {})
            for nonce in range(start, count):
                if nonce not in mine:
                    self._unknown(address, nonce, head, "no transaction the engine signed holds this nonce")
                elif mine[nonce].status == "final" and mine[nonce].mined_tx_hash is None:
                    # Made final without a receipt: a foreign transaction took the nonce (a
                    # sweep's or a payout's, once the transaction at it had its confirmations).
                    self._unknown(
                        address, nonce, head, "the nonce the engine reserved was used by another transaction"
                    )
            if count != checked.get(address):
                self.nonce_cursors[address] = count
        for row in Broadcast.select().where(
            (Broadcast.chain_id == self.chain_id) & Broadcast.status.in_(("signed", "sent"))
        ):
            self.rows_read += 1
            reserved[row.wallet][int(row.nonce)] = row
        self._taken(reserved, used, head)
        self._explain(reserved, head)

    def _taken(self, reserved: dict[str, dict[int, Broadcast]], used: dict[str, int], head: int) -> None:
        """Reserved nonces the chain has used: mined by one of the engine's payloads, or taken."""
        pending = [
            row for rows in reserved.values() for row in rows.values() if row.status in ("signed", "sent")
        ]
        if not pending:
            return
        payloads: dict[int, list[str]] = defaultdict(list)
        for p in SignedPayload.select().where(SignedPayload.broadcast.in_([r.id for r in pending])):
            payloads[p.broadcast_id].append(p.tx_hash)
        receipts = self.reader.receipts(h for hashes in payloads.values() for h in hashes)
        stuck_before = clock.now() - STUCK_AFTER
        native = self.chains.native_or_none(self.chain_id)
        for row in pending:
            landed = any(receipts.get(h) for h in payloads.get(row.id, []))
            if landed:
                continue
            if int(row.nonce) < used.get(row.wallet, 0):
                if self._ours_or_too_recent(row, payloads.get(row.id, []), head):
                    continue
                self._unknown(
                    row.wallet,
                    int(row.nonce),
                    head,
                    "the nonce the engine reserved was used by another transaction",
                )
            elif row.created_at <= stuck_before:
                critical = (
                    row.purpose == "payout" and row.created_at <= clock.now() - STUCK_PAYOUT_CRITICAL_AFTER
                )
                behind = sum(1 for other in pending if other.wallet == row.wallet and other.nonce > row.nonce)
                self.findings.append(
                    Finding(
                        "stuck_payout" if critical else "stuck_transaction",
                        self.chain_id,
                        native.code if native else "",
                        row.wallet,
                        0,
                        0,
                        f"nonce {row.nonce} ({row.purpose}, {row.tx_hash}) signed at "
                        f"{clock.iso(row.created_at)} is not mined yet"
                        + (f"; {behind} later transaction(s) of the wallet wait behind it" if behind else ""),
                        ref=row.tx_hash,
                    )
                )

    def _ours_or_too_recent(self, row: Broadcast, hashes: list[str], head: int) -> bool:
        """Whether a reserved nonce the chain has used, with none of its payloads' receipts
        found, is not an unknown outflow (yet): the transaction at the nonce is one of the
        payloads (its receipt was missing on a node behind the one that answered the nonce), or
        this node does not show it yet and the nonce was used within the chain's confirmations
        (looked at again by a later run)."""
        tx = self._transaction_at(row, head)
        if tx is not None:
            return _same_hash(tx.tx_hash, hashes)
        margin = max((a.confirmations for a in self.chains.assets_of(self.chain_id)), default=1)
        if head - margin < 0:
            return True
        return self.chains.chains[self.chain_id].nonce_at(row.wallet, head - margin) <= int(row.nonce)

    def _transaction_at(self, row: Broadcast, head: int) -> ChainTransaction | None:
        """The canonical transaction at the reservation's nonce (outgoing's look-up, from the
        block it was signed at), or None when this node does not show it (a block it has not
        seen, state it pruned)."""
        start = int(row.signed_block) - VERIFIED_MARGIN if row.signed_block is not None else 0
        try:
            return transaction_at_nonce(
                self.chains.chains[self.chain_id], row.wallet, int(row.nonce), start, head
            )
        except ChainError:
            return None

    def _explain(self, reserved: dict[str, dict[int, Broadcast]], head: int) -> None:
        """Unknown outflows found before (not acknowledged or resolved) whose nonce the chain now
        shows used by a payload the engine signed there: a node that lagged raised them."""
        for key, finding in self.known.items():
            if finding.acknowledged_at is not None or finding.resolved_at is not None:
                continue
            if any(f.key == key for f in self.findings):
                continue  # still unexplained this run
            nonce = key.rsplit(":", 1)[-1]
            if not nonce.isdigit():
                continue
            row = reserved.get(finding.address, {}).get(int(nonce)) or Broadcast.get_or_none(
                (Broadcast.chain_id == self.chain_id)
                & (Broadcast.wallet == finding.address)
                & (Broadcast.nonce == int(nonce))
            )
            if row is None:
                continue
            hashes = [p.tx_hash for p in SignedPayload.select().where(SignedPayload.broadcast == row.id)]
            tx = self._transaction_at(row, head)
            if tx is not None and _same_hash(tx.tx_hash, hashes):
                self.explained[key] = (
                    f"the chain shows nonce {nonce} used by {tx.tx_hash} in block {tx.block_number}, "
                    f"the engine's own {row.purpose} transaction (the node had not shown it yet)"
                )

    def _unknown(self, address: str, nonce: int, head: int, why: str) -> None:
        before = self.known.get(finding_key("unknown_outflow", self.chain_id, "", address, str(nonce)))
        if before is not None and before.resolved_at is not None:
            before = None  # explained once, unexplained again (a reorg): looked up afresh
        if before is not None and "could not be looked up" not in before.detail:
            self.findings.append(
                Finding(
                    "unknown_outflow",
                    self.chain_id,
                    before.asset_code,
                    address,
                    int(before.expected_minor),
                    int(before.actual_minor),
                    before.detail,
                    ref=str(nonce),
                )
            )
            return
        native = self.chains.native_or_none(self.chain_id)
        code = native.code if native else ""
        amount, tx_text = 0, "the transaction could not be looked up on this node"
        tx = self.reader.find_transaction(address, nonce, head) or self._found_by_adapter(
            address, nonce, head
        )
        if tx is not None:
            tx_hash = str(tx.get("hash"))  # JSON-RPC's own hex text
            code, amount = self._moved(tx, code)
            to = tx.get("to") or "a new contract"
            tx_text = f"transaction {tx_hash} in block {tx['blockNumber']} to {to}"
        self.findings.append(
            Finding(
                "unknown_outflow",
                self.chain_id,
                code,
                address,
                0,
                amount,
                f"nonce {nonce}: {why}: {tx_text}",
                ref=str(nonce),
            )
        )

    def _found_by_adapter(self, address: str, nonce: int, head: int) -> dict[str, Any] | None:
        """The transaction at ``nonce`` through the chain's adapter, as outgoing looks it up: the
        embedded chain has no JSON-RPC URL for the bulk reader, and its adapter keeps every
        block's state. In the bulk reader's JSON-RPC shape."""
        try:
            tx = transaction_at_nonce(self.chains.chains[self.chain_id], address, nonce, 0, head)
        except ChainError:
            return None
        if tx is None:
            return None
        return {
            "hash": tx.tx_hash,
            "blockNumber": tx.block_number,
            "to": tx.to,
            "value": tx.value,
            "input": "0x" + tx.data.hex(),
        }

    def _moved(self, tx: dict[str, Any], native_code: str) -> tuple[str, int]:
        """(asset code, amount) a transaction moved: a token transfer's amount when it calls a
        configured token's transfer(), else its native value."""
        data = tx.get("input") or "0x"
        raw = bytes.fromhex(data.removeprefix("0x")) if isinstance(data, str) else bytes(data)
        to = tx.get("to")
        if to and raw[:4] == TRANSFER and len(raw) >= 68:
            token = _token(self.chains.assets_of(self.chain_id), to_checksum_address(to))
            if token is not None:
                return token.code, int.from_bytes(raw[36:68], "big")
        value = tx.get("value", 0)
        return native_code, int(value, 16) if isinstance(value, str) else int(value)

    # -- completed payouts -----------------------------------------------------------------------------

    def _completed(self) -> None:
        since = clock.now() - COMPLETED_RECHECK
        rows = list(
            Payout.select().where(
                (Payout.chain_id == self.chain_id)
                & Payout.status.in_(("COMPLETED", "COMPLETED_SHORT"))
                & (Payout.updated_at >= since)
                & Payout.tx_hash.is_null(False)
            )
        )
        if not rows:
            return
        receipts = self.reader.receipts(r.tx_hash for r in rows)
        wallets = dict(
            Broadcast.select(Broadcast.payout, Broadcast.wallet)
            .where(Broadcast.payout.in_([r.id for r in rows]))
            .tuples()
        )
        for row in rows:
            receipt = receipts.get(row.tx_hash)
            if receipt is not None and receipt["status"] == 1:
                continue
            state = "holds it as reverted" if receipt is not None else "does not hold it"
            self.findings.append(
                Finding(
                    "payout_not_on_chain",
                    self.chain_id,
                    row.asset,
                    wallets.get(row.id, ""),
                    int(row.amount_minor),
                    0,
                    f"payout {row.payout_id} of {row.operator_id} is COMPLETED with {row.tx_hash}, "
                    f"but the canonical chain {state}",
                    ref=row.tx_hash,
                )
            )


def _exposure_text(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no unlimited operator paid out beyond what it was credited"
    return "unlimited operators paid out beyond what they were credited: " + ", ".join(
        f"{r['operatorId']} by {r['exposureMinor']}" for r in rows
    )


def _same_hash(tx_hash: str, hashes: Iterable[str]) -> bool:
    return tx_hash.lower() in {h.lower() for h in hashes}


def _token(assets: Iterable[Asset], contract: str) -> Asset | None:
    return next((a for a in assets if a.kind == "ERC20" and a.contract == contract), None)


def reconcile(chains: Chains, custody: CustodyKeys | None) -> dict[str, Any]:
    """Reconcile every chain, store the findings and wallet balances, and answer the current
    (unacknowledged) findings and each reconciled chain's solvency per asset:
    ``{"checkedAt", "findings", "solvency"}``."""
    runs: list[ChainRun] = []
    for chain_id in sorted(chains.chains):
        run = ChainRun(chains, chain_id, custody, BulkReader(chains.chains[chain_id]))
        try:
            run.run()
        except ChainError as exc:
            log.warning("treasury: %s could not be reconciled (its findings stay): %s", chain_id, exc)
            continue
        runs.append(run)
    checked_at = clock.now()
    store(runs, checked_at)
    return {
        "checkedAt": clock.iso(checked_at),
        "findings": [finding_body(r) for r in current_findings()],
        "solvency": [item.body() for run in runs for item in run.solvency],
    }


def store(runs: list[ChainRun], moment: datetime) -> None:
    """One transaction: each reconciled chain's findings replace its previous ones (an unknown
    outflow stays until acknowledged, or resolved when the run found it explained), and its
    wallets' balances replace theirs."""
    with write_transaction(database):
        for run in runs:
            seen = {f.key: f for f in run.findings}
            old = {r.key: r for r in TreasuryFinding.select().where(TreasuryFinding.chain_id == run.chain_id)}
            for key, row in old.items():
                if key not in seen and not row.sticky:
                    TreasuryFinding.delete().where(TreasuryFinding.id == row.id).execute()
                elif key not in seen and key in run.explained:
                    resolve(row, run.explained[key], moment)
            for key, f in seen.items():
                row = old.get(key)
                if row is None:
                    # insert_if_new: a reconcile of another process (the CLI beside `serve`) may
                    # have stored the same finding meanwhile; theirs is as good.
                    insert_if_new(
                        TreasuryFinding(
                            key=key,
                            kind=f.kind,
                            critical=f.kind in CRITICAL,
                            chain_id=f.chain_id,
                            asset_code=f.asset_code,
                            address=f.address,
                            expected_minor=str(f.expected),
                            actual_minor=str(f.actual),
                            detail=f.detail,
                            sticky=f.kind in STICKY,
                            first_seen_at=moment,
                            last_seen_at=moment,
                            acknowledged_at=None,
                            acknowledged_by=None,
                        )
                    )
                    log.log(
                        logging.ERROR if f.kind in CRITICAL else logging.WARNING,
                        "treasury finding %s on %s %s %s: %s",
                        f.kind,
                        f.chain_id,
                        f.asset_code,
                        f.address,
                        f.detail,
                    )
                else:
                    TreasuryFinding.update(
                        asset_code=f.asset_code,
                        expected_minor=str(f.expected),
                        actual_minor=str(f.actual),
                        detail=f.detail,
                        last_seen_at=moment,
                        resolved_at=None,  # found again: open again
                        resolution=None,
                    ).where(TreasuryFinding.id == row.id).execute()
            if run.flows is not None:
                run.flows.commit()
            for address, count in run.nonce_cursors.items():
                TreasuryNonceCursor.insert(
                    chain_id=run.chain_id, address=address, checked_below=count
                ).on_conflict(
                    conflict_target=[TreasuryNonceCursor.chain_id, TreasuryNonceCursor.address],
                    update={TreasuryNonceCursor.checked_below: count},
                ).execute()
            if run.folded is not None:
                fold_movements(run.chain_id, *run.folded)
            TreasuryBalance.delete().where(TreasuryBalance.chain_id == run.chain_id).execute()
            for position, low in run.wallets:
                insert_if_new(
                    TreasuryBalance(
                        chain_id=position.chain_id,
                        asset_code=position.asset_code,
                        role=position.role,
                        address=position.address,
                        on_chain_minor=str(position.on_chain),
                        expected_minor=str(position.expected),
                        low_balance=low,
                        checked_at=moment,
                    )
                )
        insert_if_new(
            TreasuryRun(
                name=RUN, holder=None, lease_until=None, checked_at=moment, next_run_at=None, last_error=None
            )
        )
        TreasuryRun.update(checked_at=moment).where(TreasuryRun.name == RUN).execute()


def resolve(row: TreasuryFinding, why: str, moment: datetime) -> None:
    """The reconciler's own clearing of a finding the chain explained: kept, with when and why."""
    TreasuryFinding.update(resolved_at=moment, resolution=why).where(
        (TreasuryFinding.id == row.id) & TreasuryFinding.resolved_at.is_null()
    ).execute()
    log.warning("treasury finding %s on %s %s resolved: %s", row.kind, row.chain_id, row.address, why)


# How long a finding the reconciler resolved is listed (``appliance reconcile``'s text; the cli says 7 days).
RESOLVED_SHOWN = timedelta(days=7)


def recently_resolved() -> list[TreasuryFinding]:
    """Findings the reconciler resolved within RESOLVED_SHOWN, newest first: what an
    administrator did not have to acknowledge, and why."""
    since = clock.now() - RESOLVED_SHOWN
    return list(
        TreasuryFinding.select()
        .where(TreasuryFinding.resolved_at >= since)
        .order_by(TreasuryFinding.resolved_at.desc(), TreasuryFinding.id.desc())
    )


def is_open() -> Any:
    """The condition of a finding still open: neither acknowledged nor resolved."""
    return TreasuryFinding.acknowledged_at.is_null() & TreasuryFinding.resolved_at.is_null()


def current_findings() -> list[TreasuryFinding]:
    """Open findings, critical first, then by kind, chain and address."""
    rows = TreasuryFinding.select().where(is_open())
    return sorted(
        rows,
        key=lambda r: (
            not r.critical,
            KINDS.index(r.kind) if r.kind in KINDS else 99,
            r.chain_id,
            r.address,
            r.key,
        ),
    )


def acknowledge(chain_id: str, address: str, nonce: int, by: str) -> int:
    """An administrator has looked at the unknown outflow at ``address``'s ``nonce``: it leaves
    the findings (kept, with who and when). Returns how many findings were acknowledged."""
    with write_transaction(database):
        return int(
            TreasuryFinding.update(acknowledged_at=clock.now(), acknowledged_by=by[:200])
            .where(
                (TreasuryFinding.kind == "unknown_outflow")
                & (TreasuryFinding.chain_id == chain_id)
                & (TreasuryFinding.address == address)
                & (TreasuryFinding.key == finding_key("unknown_outflow", chain_id, "", address, str(nonce)))
                & is_open()
            )
            .execute()
        )


def acknowledge_ref(chain_id: str, address: str, ref: str, by: str) -> int:
    """An administrator has looked at the findings of ``address`` that stay until acknowledged
    and name ``ref``: a transaction hash (an unexplained outflow, a deposit out of range) or a
    block range (a flow mismatch, ``FROM-TO``). Returns how many were acknowledged."""
    with write_transaction(database):
        return int(
            TreasuryFinding.update(acknowledged_at=clock.now(), acknowledged_by=by[:200])
            .where(
                TreasuryFinding.kind.in_(sorted(STICKY - {"unknown_outflow"}))
                & (TreasuryFinding.chain_id == chain_id)
                & (TreasuryFinding.address == address)
                & TreasuryFinding.key.endswith(":" + ref.lower())
                & is_open()
            )
            .execute()
        )
