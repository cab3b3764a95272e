"""Flow-based expected balances of the custody wallets (docs/engine-treasury.md, "Flows").

Each run reads the blocks since the last (a cursor per chain, at most MAX_BLOCKS a run, up to the
head less the chain's confirmations) and, per custody wallet and asset, compares what the chain's
own records say moved with what the engine says it sent and received:

- tokens: every Transfer log out of a custody address (the payout and fee wallets and every
  deposit address), whatever method emitted it: ``transferFrom`` after an EIP-2612 ``permit``,
  ``transferWithAuthorization`` (EIP-3009) use no nonce of the wallet. A transfer whose
  transaction the engine did not sign is an ``unexplained_outflow`` naming it (one sent by the
  wallet itself uses its nonce: the nonce check's ``unknown_outflow`` names it instead). For the
  payout and fee wallets the balance must then equal the last checkpoint plus the Transfer logs in
  less those out; less than that (a token that moved without a log) is a ``flow_mismatch``.
- the native asset: the payout and fee wallets' balances must be at least the last checkpoint plus
  what the engine's own transactions mined in those blocks brought in, less what they took out
  (value and fee). Less than that: the blocks are read for transactions from the wallet that the
  engine did not sign (their nonce findings name them); what they still leave unexplained is a
  ``flow_mismatch`` naming the blocks.
- allowances: every (custody address, spender) seen in an Approval log is read with
  ``allowance()`` on each run; while it is not zero it is an ``allowance`` finding (whoever holds
  the spender's key can move the wallet's tokens without any nonce of the wallet).

More than the flows explain (a contract's internal transfer in, a miner's tip) is no finding: the
engine cannot see internal transfers without traces, and money arriving is not money lost.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from eth_utils import keccak, to_checksum_address

from appliance.common import clock
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.models import (
    Broadcast,
    DepositAddress,
    SignedPayload,
    TreasuryAllowance,
    TreasuryFlowCheckpoint,
    TreasuryFlowCursor,
    TreasuryMovement,
)
from appliance.engine.outgoing import transactions
from appliance.engine.treasury.bulk import BulkReader

TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
APPROVAL_TOPIC = "0x" + keccak(text="Approval(address,address,uint256)").hex()
ALLOWANCE = keccak(text="allowance(address,address)")[:4]
MAX_BLOCKS = 500  # blocks read per run and chain: a run's work is bounded, a backlog catches up
TOPICS_PER_REQUEST = 200  # addresses in one eth_getLogs topic filter
MAX_DEPOSIT = 10**39 - 1  # the specification's amountMinor: at most 39 digits


@dataclasses.dataclass(frozen=True)
class FlowFinding:
    kind: str  # unexplained_outflow | flow_mismatch | allowance
    asset_code: str
    address: str
    expected: int
    actual: int
    detail: str
    ref: str


def _topic(address: str) -> str:
    return "0x" + "00" * 12 + address[2:].lower()


def _address(topic: str) -> str:
    return to_checksum_address("0x" + topic[-40:])


def _int(value: Any) -> int:
    text = str(value)
    if text in ("0x", ""):
        return 0
    return int(text, 16) if text.startswith("0x") else int(text)


@dataclasses.dataclass
class FlowRun:
    """The flows of one chain over one window of blocks; ``commit`` (inside the reconcile's store
    transaction) moves the cursor, the checkpoints and the allowances."""

    chains: Chains
    chain_id: str
    custody: CustodyKeys | None
    reader: BulkReader
    findings: list[FlowFinding] = dataclasses.field(default_factory=list)
    window: tuple[int, int] | None = None
    checkpoints: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    approvals: dict[tuple[str, str, str], tuple[str, int]] = dataclasses.field(default_factory=dict)
    zero_allowances: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    deposit_outflows: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    first: bool = False

    def run(self, head: int) -> None:
        if self.reader.url is None or self.custody is None:
            return  # the embedded chain answers no logs; without a key there are no wallets
        assets = self.chains.assets_of(self.chain_id)
        confirmations = max((a.confirmations for a in assets), default=1)
        last = head - confirmations
        if last < 0:
            return
        cursor = TreasuryFlowCursor.get_or_none(TreasuryFlowCursor.chain_id == self.chain_id)
        start = cursor.next_block if cursor is not None else None
        wallets = [self.custody.payout_address, self.custody.fee_address]
        if start is None:
            # The first run: the balances at the confirmed head are where the flows start.
            self.first = True
            self.window = (last + 1, last)
            self._checkpoint(wallets, assets, last)
        elif start <= last:
            end = min(last, start + MAX_BLOCKS - 1)
            self.window = (start, end)
            self._flows(wallets, assets, start, end)
        self._allowances(assets)

    # -- the window ------------------------------------------------------------------------------------

    def _checkpoint(self, wallets: list[str], assets: Sequence[Asset], block: int) -> list[int]:
        pairs = [(w, a) for w in wallets for a in assets]
        balances = self.reader.balances(
            [(w, a.contract if a.kind == "ERC20" else None) for w, a in pairs], block
        )
        for (w, a), amount in zip(pairs, balances, strict=True):
            self.checkpoints[(w, a.code)] = amount
        return balances

    def _flows(self, wallets: list[str], assets: Sequence[Asset], start: int, end: int) -> None:
        before = {
            (r.address, r.asset_code): int(r.balance_minor)
            for r in TreasuryFlowCheckpoint.select().where(TreasuryFlowCheckpoint.chain_id == self.chain_id)
        }
        self._checkpoint(wallets, assets, end)
        tokens = {a.contract: a for a in assets if a.kind == "ERC20" and a.contract}
        deposits = [
            a
            for (a,) in DepositAddress.select(DepositAddress.address)
            .where(DepositAddress.chain_id == self.chain_id)
            .tuples()
        ]
        custody = list(dict.fromkeys(wallets + deposits))
        token_in: dict[tuple[str, str], int] = defaultdict(int)
        token_out: dict[tuple[str, str], int] = defaultdict(int)
        outflows: list[dict[str, Any]] = []
        if tokens:
            contracts = list(tokens)
            for log in self._logs(contracts, TRANSFER_TOPIC, custody, start, end, position=1):
                code = tokens[to_checksum_address(log["address"])].code
                sender, amount = _address(log["topics"][1]), _int(log["data"])
                token_out[(sender, code)] += amount
                outflows.append({**log, "from": sender, "to": _address(log["topics"][2]), "code": code})
            for log in self._logs(contracts, TRANSFER_TOPIC, custody, start, end, position=2):
                code = tokens[to_checksum_address(log["address"])].code
                receiver, amount = _address(log["topics"][2]), _int(log["data"])
                if receiver in wallets:
                    token_in[(receiver, code)] += amount
                elif amount > MAX_DEPOSIT:
                    self._out_of_range(log, receiver, code, amount)
            for log in self._logs(contracts, APPROVAL_TOPIC, custody, start, end, position=1):
                code = tokens[to_checksum_address(log["address"])].code
                key = (code, _address(log["topics"][1]), _address(log["topics"][2]))
                self.approvals[key] = (str(log["transactionHash"]), _int(log["blockNumber"]))
        self._outflows(outflows, wallets)
        native = self.chains.native_or_none(self.chain_id)
        native_change = self._engine_native(wallets, start, end) if native is not None else {}
        for w in wallets:
            for a in assets:
                base = before.get((w, a.code))
                if base is None:
                    continue  # a wallet or asset added since: its checkpoint starts now
                actual = self.checkpoints[(w, a.code)]
                if a.kind == "ERC20":
                    expected = base + token_in[(w, a.code)] - token_out[(w, a.code)]
                    if actual < expected:
                        self._mismatch(a.code, w, expected, actual, start, end, "its Transfer logs")
                    continue
                expected = base + native_change.get(w, 0)
                if actual < expected:
                    expected -= self._foreign_native(w, start, end)
                if actual < expected:
                    self._mismatch(a.code, w, expected, actual, start, end, "the engine's transactions")

    def _logs(
        self, contracts: list[str], topic0: str, addresses: list[str], start: int, end: int, *, position: int
    ) -> list[dict[str, Any]]:
        calls = []
        for at in range(0, len(addresses), TOPICS_PER_REQUEST):
            chunk = [_topic(a) for a in addresses[at : at + TOPICS_PER_REQUEST]]
            topics: list[Any] = [topic0, None, None]
            topics[position] = chunk
            calls.append(
                (
                    "eth_getLogs",
                    [{"fromBlock": hex(start), "toBlock": hex(end), "address": contracts, "topics": topics}],
                )
            )
        out: list[dict[str, Any]] = []
        for answer in self.reader.batch(calls, per_request=10):
            out += [log for log in answer or [] if not log.get("removed")]
        return out

    def _outflows(self, outflows: list[dict[str, Any]], wallets: list[str]) -> None:
        """Token transfers out of custody that the engine did not sign: named, unless the wallet
        itself sent the transaction (its nonce is then the nonce check's finding)."""
        if not outflows:
            return
        ours = engine_hashes(str(log["transactionHash"]) for log in outflows)
        foreign = [log for log in outflows if str(log["transactionHash"]).lower() not in ours]
        if not foreign:
            return
        hashes = list(dict.fromkeys(str(log["transactionHash"]) for log in foreign))
        senders = {
            h: to_checksum_address(tx["from"]) if tx else None
            for h, tx in zip(
                hashes, self.reader.batch([("eth_getTransactionByHash", [h]) for h in hashes]), strict=True
            )
        }
        moved: dict[tuple[str, str, str], list[Any]] = {}
        for log in foreign:
            tx_hash = str(log["transactionHash"])
            if senders.get(tx_hash) == log["from"]:
                continue
            entry = moved.setdefault(
                (tx_hash, log["from"], log["code"]), [0, set(), _int(log["blockNumber"])]
            )
            entry[0] += _int(log["data"])
            entry[1].add(log["to"])
        for (tx_hash, sender, code), (amount, receivers, block) in moved.items():
            spender = senders.get(tx_hash) or "an unknown sender"
            self.findings.append(
                FlowFinding(
                    "unexplained_outflow",
                    code,
                    sender,
                    0,
                    amount,
                    f"transaction {tx_hash} in block {block}, sent by {spender} (not the wallet: no nonce "
                    f"of it was used), moved {amount} {code} out to {', '.join(sorted(receivers))}; the "
                    "engine signed no such transfer (a permit's transferFrom, a transferWithAuthorization)",
                    tx_hash.lower(),
                )
            )
            if sender not in wallets:
                key = (sender, code)
                self.deposit_outflows[key] = self.deposit_outflows.get(key, 0) - amount

    def _out_of_range(self, log: dict[str, Any], receiver: str, code: str, amount: int) -> None:
        """A transfer to a deposit address above the specification's amountMinor (39 digits: a
        30-decimal token's 10^39 minor units and more): no deposit can carry it, so the watcher
        records none. Named here, and counted in the address's expected balance (it is this
        finding, not also a ``deposit_not_recorded``)."""
        tx_hash = str(log["transactionHash"])
        self.findings.append(
            FlowFinding(
                "deposit_out_of_range",
                code,
                receiver,
                MAX_DEPOSIT,
                amount,
                f"transaction {tx_hash} in block {_int(log['blockNumber'])} sent {amount} {code} minor units "
                f"to this deposit address: more than the 39 digits of a deposit's amountMinor, so no "
                "operator was credited; the funds are in custody (credit the operator with "
                "`appliance operator credit` in parts, or return them)",
                tx_hash.lower(),
            )
        )
        key = (receiver, code)
        self.deposit_outflows[key] = self.deposit_outflows.get(key, 0) + amount

    def _engine_native(self, wallets: list[str], start: int, end: int) -> dict[str, int]:
        """Wallet → what the engine's own transactions mined in [start, end] changed its native
        balance by: value in, value and fee out (a reverted one: its fee only)."""
        rows = list(
            Broadcast.select().where(
                (Broadcast.chain_id == self.chain_id)
                & (
                    Broadcast.status.in_(("signed", "sent", "mined"))
                    | (
                        (Broadcast.status == "final")
                        & (Broadcast.mined_block >= start)
                        & (Broadcast.mined_block <= end)
                    )
                )
            )
        )
        if not rows:
            return {}
        payloads: dict[int, dict[str, str]] = defaultdict(dict)
        for p in SignedPayload.select(
            SignedPayload.broadcast, SignedPayload.tx_hash, SignedPayload.raw
        ).where(SignedPayload.broadcast.in_([r.id for r in rows])):
            payloads[p.broadcast_id][p.tx_hash] = p.raw
        receipts = self.reader.receipts(h for hashes in payloads.values() for h in hashes)
        change: dict[str, int] = defaultdict(int)
        for row in rows:
            for tx_hash, raw in payloads.get(row.id, {}).items():
                receipt = receipts.get(tx_hash)
                if not receipt or not start <= int(receipt["blockNumber"]) <= end:
                    continue
                to, value, _ = transactions.decode_raw(raw)
                moved = value if receipt["status"] == 1 else 0
                if row.wallet in wallets:
                    change[row.wallet] -= moved + int(receipt["fee"])
                if to_checksum_address(to) in wallets:
                    change[to_checksum_address(to)] += moved
        return change

    def _foreign_native(self, wallet: str, start: int, end: int) -> int:
        """What transactions sent by ``wallet`` in [start, end] that the engine did not sign took
        (value and fee): each used a nonce of the wallet, which the nonce check names."""
        blocks = self.reader.batch([("eth_getBlockByNumber", [hex(n), True]) for n in range(start, end + 1)])
        sent = [
            tx
            for block in blocks
            for tx in (block or {}).get("transactions", [])
            if to_checksum_address(tx["from"]) == wallet
        ]
        ours = engine_hashes(str(tx["hash"]) for tx in sent)
        foreign = [tx for tx in sent if str(tx["hash"]).lower() not in ours]
        if not foreign:
            return 0
        receipts = self.reader.receipts(str(tx["hash"]) for tx in foreign)
        taken = 0
        for tx in foreign:
            receipt = receipts.get(str(tx["hash"]))
            if receipt:
                taken += (_int(tx["value"]) if receipt["status"] == 1 else 0) + int(receipt["fee"])
        return taken

    def _mismatch(
        self, code: str, wallet: str, expected: int, actual: int, start: int, end: int, what: str
    ) -> None:
        self.findings.append(
            FlowFinding(
                "flow_mismatch",
                code,
                wallet,
                expected,
                actual,
                f"blocks {start} to {end}: the wallet holds {expected - actual} less than its balance at "
                f"block {start - 1} and {what} in those blocks explain",
                f"{start}-{end}",
            )
        )

    # -- allowances -------------------------------------------------------------------------------------

    def _allowances(self, assets: Sequence[Asset]) -> None:
        tokens = {a.code: a.contract for a in assets if a.kind == "ERC20" and a.contract}
        pairs = {
            (r.asset_code, r.owner, r.spender): (r.tx_hash, int(r.block))
            for r in TreasuryAllowance.select().where(TreasuryAllowance.chain_id == self.chain_id)
        }
        pairs.update(self.approvals)
        pairs = {k: v for k, v in pairs.items() if k[0] in tokens}
        if not pairs:
            return
        keys = list(pairs)
        calls = [
            (
                "eth_call",
                [
                    {"to": tokens[code], "data": "0x" + (ALLOWANCE + _word(owner) + _word(spender)).hex()},
                    "latest",
                ],
            )
            for code, owner, spender in keys
        ]
        for key, answer in zip(keys, self.reader.batch(calls), strict=True):
            code, owner, spender = key
            amount = _int(answer)
            if amount == 0:
                self.zero_allowances.append(key)
                continue
            tx_hash, block = pairs[key]
            self.findings.append(
                FlowFinding(
                    "allowance",
                    code,
                    owner,
                    0,
                    amount,
                    f"{spender} may move {amount} {code} out of this custody wallet without any nonce of it "
                    f"(Approval in {tx_hash}, block {block}); the engine never approves a spender",
                    spender,
                )
            )

    # -- the store -------------------------------------------------------------------------------------

    def commit(self) -> None:
        """Inside the reconcile's store transaction: the cursor, checkpoints and allowances move
        with the findings, or not at all."""
        moment = clock.now()
        if self.window is not None:
            TreasuryFlowCursor.insert(
                chain_id=self.chain_id, next_block=self.window[1] + 1, updated_at=moment
            ).on_conflict(
                conflict_target=[TreasuryFlowCursor.chain_id],
                update={
                    TreasuryFlowCursor.next_block: self.window[1] + 1,
                    TreasuryFlowCursor.updated_at: moment,
                },
            ).execute()
            for (address, code), amount in self.checkpoints.items():
                TreasuryFlowCheckpoint.insert(
                    chain_id=self.chain_id,
                    address=address,
                    asset_code=code,
                    block=self.window[1],
                    balance_minor=str(amount),
                ).on_conflict(
                    conflict_target=[
                        TreasuryFlowCheckpoint.chain_id,
                        TreasuryFlowCheckpoint.address,
                        TreasuryFlowCheckpoint.asset_code,
                    ],
                    update={
                        TreasuryFlowCheckpoint.block: self.window[1],
                        TreasuryFlowCheckpoint.balance_minor: str(amount),
                    },
                ).execute()
        for (code, owner, spender), (tx_hash, block) in self.approvals.items():
            TreasuryAllowance.insert(
                chain_id=self.chain_id,
                asset_code=code,
                owner=owner,
                spender=spender,
                tx_hash=tx_hash[:66],
                block=block,
            ).on_conflict(
                conflict_target=[
                    TreasuryAllowance.chain_id,
                    TreasuryAllowance.asset_code,
                    TreasuryAllowance.owner,
                    TreasuryAllowance.spender,
                ],
                update={TreasuryAllowance.tx_hash: tx_hash[:66], TreasuryAllowance.block: block},
            ).execute()
        for code, owner, spender in self.zero_allowances:
            TreasuryAllowance.delete().where(
                (TreasuryAllowance.chain_id == self.chain_id)
                & (TreasuryAllowance.asset_code == code)
                & (TreasuryAllowance.owner == owner)
                & (TreasuryAllowance.spender == spender)
            ).execute()
        for (address, code), change in self.deposit_outflows.items():
            add_movement(self.chain_id, address, code, change)


def add_movement(chain_id: str, address: str, code: str, change: int) -> None:
    """Add to a deposit address's folded movements (inside the caller's transaction)."""
    TreasuryMovement.insert(
        chain_id=chain_id, address=address, asset_code=code, change_minor="0"
    ).on_conflict_ignore().execute()
    where = (
        (TreasuryMovement.chain_id == chain_id)
        & (TreasuryMovement.address == address)
        & (TreasuryMovement.asset_code == code)
    )
    row = TreasuryMovement.get(where)
    TreasuryMovement.update(change_minor=str(int(row.change_minor) + change)).where(where).execute()


def fold_movements(chain_id: str, cursor: int, changes: dict[tuple[str, str], int]) -> None:
    """Fold final sweeps' changes into ``treasury_movement`` and move the fold's cursor (inside
    the reconcile's store transaction)."""
    for (address, code), change in changes.items():
        add_movement(chain_id, address, code, change)
    TreasuryFlowCursor.insert(
        chain_id=chain_id, next_block=None, movements_from=cursor, updated_at=clock.now()
    ).on_conflict(
        conflict_target=[TreasuryFlowCursor.chain_id],
        update={TreasuryFlowCursor.movements_from: cursor},
    ).execute()


def _word(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def engine_hashes(hashes: Iterable[str]) -> set[str]:
    """Which of ``hashes`` are payloads the engine signed (lower case: the engine stores them so)."""
    wanted = list(dict.fromkeys(h.lower() for h in hashes))
    found: set[str] = set()
    for at in range(0, len(wanted), 500):
        chunk = wanted[at : at + 500]
        found |= {
            h.lower()
            for (h,) in SignedPayload.select(SignedPayload.tx_hash)
            .where(SignedPayload.tx_hash.in_(chunk))
            .tuples()
        }
    return found
