"""The embedded EVM chain (chainId ``eth_local``, networkId 1337): py-evm over a SQLite file.

Why this shape:
- State lives in its own file (``chain/eth_local.db`` in the data directory), never in engine.db,
  whose write lock every signed request takes. py-evm keeps its tries and blocks in a key-value
  store; here that store is one SQLite table, and every block is written in ONE SQLite transaction
  (trie nodes, the block, the canonical head, and the removal of its transactions from the pool), so
  a ``kill -9`` leaves either the block or nothing. Opening the chain reads its head: start-up does
  not grow with the chain's age.
- Transactions wait in a pool table in the same file, so any process can submit (the engine's
  payout worker, ``appliance chain faucet`` while ``serve`` runs). Exactly one process mines: the
  holder of a lease row; ``serve`` holds it, and the faucet mines its own block when nobody does.
- The EVM is py-evm's Cancun fork (the contracts are compiled for it), post-merge: no proof of
  work, blocks only while something needs them (a transaction in the pool: soon; a payout or
  deposit waiting for confirmations: every ``block_seconds``), EIP-1559 base fees. An idle chain
  mines nothing, so its file does not grow; ``compact`` packs the headers of old empty blocks.
  The pool validates like a node: nonce too low, insufficient funds, replacement underpriced,
  intrinsic gas; a transaction with a future nonce waits for the gap to close.
- The faucet account is a well-known development key holding the whole native supply (2^256 - 1
  wei at genesis); it deploys the USDC contract in block 1 and is its only minter. This chain
  carries no value: the key is not a secret.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import rlp
from eth.abc import SignedTransactionAPI
from eth.chains.base import MiningChain
from eth.constants import BLANK_ROOT_HASH, EMPTY_UNCLE_HASH, ZERO_ADDRESS
from eth.db.atomic import AtomicDB
from eth.db.backends.base import BaseDB
from eth.db.schema import SchemaV1
from eth.vm.forks import CancunVM
from eth.vm.spoof import SpoofTransaction
from eth_account import Account
from eth_typing import BlockNumber
from eth_utils import keccak, to_canonical_address, to_checksum_address

from appliance.common import faults
from appliance.common.holders import instance_holder
from appliance.common.jobs import failure_pause
from appliance.common.lease import SingletonLease, SqliteRow
from appliance.engine.chain.base import (
    BlockRef,
    ChainError,
    ChainTransaction,
    EstimateReverted,
    FeeQuote,
    NativeTransfer,
    Receipt,
    Rejection,
    TokenTransfer,
    TransactionRejected,
)
from appliance.engine.chain.contracts import artifact
from appliance.engine.chain.estimate import EstimateFailed, least_gas

log = logging.getLogger("appliance.engine.chain.local")

NETWORK_ID = 1337
GAS_LIMIT = 30_000_000
# The most gas the engine's own estimates try (estimate.py): above the signer's every gas ceiling.
ESTIMATE_CAP = 1_000_000
FAUCET_KEY = keccak(text="appliance eth_local faucet: a development key, holding nothing of value")
FAUCET = Account.from_key(FAUCET_KEY)
PRIORITY_FEE = 10**9  # 1 gwei: what the faucet and the fee quote offer the (burning) miner
TRANSFER_TOPIC = int.from_bytes(keccak(text="Transfer(address,address,uint256)"), "big")
BALANCE_OF = keccak(text="balanceOf(address)")[:4]
MINT = keccak(text="mint(address,uint256)")[:4]
REPLACEMENT_BUMP = 1.10  # a replacement must raise both fees by 10 %, as geth requires
MIN_BLOCK_GAP = 0.2  # seconds between blocks when transactions wait (timestamps stay near real time)
IDLE_POLL = 1.0  # seconds between looks at the pool and the engine's waits while nothing needs blocks
# The miner lease: renewed every third of it, so an idle miner writes the file every 10 s; a miner
# that died on this host frees it at once (holder_gone), a hung one after LEASE_SECONDS.
LEASE_SECONDS = 30.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pool (
    hash BLOB PRIMARY KEY, sender BLOB NOT NULL, nonce INTEGER NOT NULL, raw BLOB NOT NULL,
    max_fee TEXT NOT NULL, tip TEXT NOT NULL, seq INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS pool_sender_nonce ON pool (sender, nonce);
CREATE TABLE IF NOT EXISTS lease (name TEXT PRIMARY KEY, holder TEXT, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS kv_packed (key BLOB PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
"""
# ``appliance chain compact`` moves the headers of old empty blocks from ``kv`` to ``kv_packed``,
# deflated against this dictionary (what every empty Cancun header repeats: the zero logs bloom,
# the empty-trie and empty-uncles roots, the zero coinbase). A packed value is PACK_VERSION and the
# deflated bytes; the dictionary of a version never changes, or packed headers could not be read.
PACK_VERSION = b"\x01"
PACK_DICT = bytes(20) + bytes(256) + EMPTY_UNCLE_HASH + BLANK_ROOT_HASH * 3 + bytes(8)
VACUUM_LEASE_SECONDS = 3600.0
KEEP_RECENT = 256  # the newest blocks compact never touches (their scores choose the next head)


class ChainBusy(ChainError):
    """Another process holds the miner lease (``serve`` runs): the chain file is in use."""


class MinerTimer:
    """The miner's clock and sleep; tests give a fast one to run a simulated day in seconds."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(seconds)


class _PosChain(MiningChain):
    vm_configuration = ((BlockNumber(0), CancunVM),)
    chain_id = NETWORK_ID


class _Store(BaseDB):
    """py-evm's key-value store over the ``kv`` table. Writes stay in memory until ``flush`` runs
    them in the caller's SQLite transaction; a view that never flushes (reads, gas estimates,
    calls) leaves the file untouched."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.writes: dict[bytes, bytes | None] = {}

    def __getitem__(self, key: bytes) -> bytes:
        if key in self.writes:
            value = self.writes[key]
            if value is None:
                raise KeyError(key)
            return value
        row = self.conn.execute(
            "SELECT value, 0 FROM kv WHERE key = ? UNION ALL SELECT value, 1 FROM kv_packed WHERE key = ?",
            (key, key),
        ).fetchone()
        if row is None:
            raise KeyError(key)
        return _unpack(bytes(row[0])) if row[1] else bytes(row[0])

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self.writes[key] = value

    def __delitem__(self, key: bytes) -> None:
        if not self._exists(key):
            raise KeyError(key)
        self.writes[key] = None

    def _exists(self, key: bytes) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def flush(self) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
            [(k, v) for k, v in self.writes.items() if v is not None],
        )
        gone = [(k,) for k, v in self.writes.items() if v is None]
        self.conn.executemany("DELETE FROM kv WHERE key = ?", gone)
        self.conn.executemany("DELETE FROM kv_packed WHERE key = ?", gone)
        self.writes.clear()


def _pack(value: bytes) -> bytes:
    packer = zlib.compressobj(9, zdict=PACK_DICT)
    return PACK_VERSION + packer.compress(value) + packer.flush()


def _unpack(stored: bytes) -> bytes:
    if stored[:1] != PACK_VERSION:
        raise ChainError(f"eth_local: a packed value of unknown version {stored[:1].hex()}")
    unpacker = zlib.decompressobj(zdict=PACK_DICT)
    return unpacker.decompress(stored[1:]) + unpacker.flush()


def _hex(value: bytes) -> str:
    return "0x" + bytes(value).hex()


def _status_ok(receipt: Any) -> bool:
    return bytes(receipt.state_root) == b"\x01"


class LocalChain:
    chain_id = "eth_local"
    network_id = NETWORK_ID
    environment = "local"

    def __init__(self, path: Path, *, block_seconds: float = 1.0) -> None:
        self.path = Path(path)
        self.block_seconds = block_seconds
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._mine_lock = threading.Lock()  # one mining step at a time within this process
        self._wake = threading.Event()
        self._last_included = 0  # transactions in the last block this process mined
        self.holder = instance_holder()
        self._lease = SingletonLease(
            SqliteRow(self._write, "miner"), timedelta(seconds=LEASE_SECONDS), holder=self.holder
        )
        self._ensure_genesis()
        self.usdc_contract = usdc_contract()

    # -- connections -------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed block survives kill -9
            conn.executescript(SCHEMA)
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Reads that must see one state (a nonce and an execution at it): one read transaction,
        so the miner committing a block in between cannot split them."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def _view(self) -> tuple[Any, _Store]:
        """A py-evm chain object at the current head (reads only; its writes are never flushed)."""
        store = _Store(self._conn())
        return _PosChain(AtomicDB(store)), store

    # -- genesis -----------------------------------------------------------------------------

    def _ensure_genesis(self) -> None:
        with self._write() as conn:
            store = _Store(conn)
            if conn.execute("SELECT 1 FROM kv LIMIT 1").fetchone() is not None:
                return
            params: Any = {
                "coinbase": ZERO_ADDRESS,
                "difficulty": 0,
                "gas_limit": GAS_LIMIT,
                "extra_data": b"appliance eth_local",
                "mix_hash": bytes(32),
                "nonce": bytes(8),
                "timestamp": int(time.time()),
            }
            faucet = to_canonical_address(FAUCET.address)
            state: Any = {faucet: {"balance": 2**256 - 1, "nonce": 0, "code": b"", "storage": {}}}
            chain: Any = _PosChain.from_genesis(AtomicDB(store), params, state)
            # Block 1 deploys USDC from the faucet account (nonce 0), so its address is fixed.
            base_fee = chain.header.base_fee_per_gas
            deploy = self._faucet_tx(
                0, None, 0, bytes.fromhex(artifact("usdc")["bytecode"][2:]), 3_000_000, base_fee
            )
            evm_tx = chain.get_vm().get_transaction_builder().decode(deploy)
            _, receipt, _ = chain.apply_transaction(evm_tx)
            if not _status_ok(receipt):
                raise ChainError("the USDC contract failed to deploy on the local chain")
            chain.mine_block(mix_hash=os.urandom(32))
            store.flush()
            log.info(
                "local chain created at %s (USDC at %s)", self.path, _contract_address(FAUCET.address, 0)
            )

    @staticmethod
    def _faucet_tx(nonce: int, to: str | None, value: int, data: bytes, gas: int, base_fee: int) -> bytes:
        tx: dict[str, Any] = {
            "type": 2,
            "chainId": NETWORK_ID,
            "nonce": nonce,
            "value": value,
            "data": data,
            "gas": gas,
            "maxFeePerGas": 2 * base_fee + PRIORITY_FEE,
            "maxPriorityFeePerGas": PRIORITY_FEE,
        }
        if to is not None:
            tx["to"] = to_checksum_address(to)
        return bytes(FAUCET.sign_transaction(tx).raw_transaction)

    # -- reads -------------------------------------------------------------------------------

    def head(self) -> BlockRef:
        chain, _ = self._view()
        header = chain.get_canonical_head()
        return BlockRef(header.block_number, _hex(header.hash), header.timestamp)

    def block(self, number: int) -> BlockRef | None:
        chain, _ = self._view()
        try:
            header = chain.get_canonical_block_header_by_number(number)
        except Exception:  # HeaderNotFound above the head
            return None
        return BlockRef(header.block_number, _hex(header.hash), header.timestamp)

    def balance(self, address: str, contract: str | None = None) -> int:
        chain, _ = self._view()
        if contract is None:
            return int(chain.get_vm().state.get_balance(to_canonical_address(address)))
        data = BALANCE_OF + bytes(12) + to_canonical_address(address)
        with self._snapshot():
            out = self._call(self._view()[0], contract, data)
        return int.from_bytes(out, "big") if out else 0

    def _call(self, chain: Any, to: str, data: bytes) -> bytes:
        head = chain.get_canonical_head()
        vm = chain.get_vm()
        tx = vm.create_unsigned_transaction(
            nonce=vm.state.get_nonce(ZERO_ADDRESS),
            gas_price=0,
            gas=GAS_LIMIT,
            to=to_canonical_address(to),
            value=0,
            data=data,
        )
        return bytes(chain.get_transaction_result(SpoofTransaction(tx, from_=ZERO_ADDRESS), head))

    def nonce(self, address: str) -> int:
        chain, _ = self._view()
        return int(chain.get_vm().state.get_nonce(to_canonical_address(address)))

    def pending_nonce(self, address: str) -> int:
        """The latest nonce, or one above the highest the pool holds of ``address``."""
        nonce = self.nonce(address)
        row = (
            self._conn()
            .execute("SELECT MAX(nonce) FROM pool WHERE sender = ?", (to_canonical_address(address),))
            .fetchone()
        )
        return nonce if row[0] is None else max(nonce, int(row[0]) + 1)

    def nonce_at(self, address: str, number: int) -> int:
        chain, _ = self._view()
        try:  # every block's state is kept (compaction too keeps all state)
            header = chain.get_canonical_block_header_by_number(BlockNumber(number))
        except Exception as exc:  # HeaderNotFound above the head
            raise ChainError(f"{self.chain_id}: no block {number}") from exc
        return int(chain.get_vm(header).state.get_nonce(to_canonical_address(address)))

    def fee_quote(self) -> FeeQuote:
        chain, _ = self._view()
        base = int(chain.header.base_fee_per_gas)  # the next block's base fee
        return FeeQuote(max_fee_per_gas=2 * base + PRIORITY_FEE, max_priority_fee_per_gas=PRIORITY_FEE)

    def estimate_gas(self, sender: str, to: str, value: int, data: bytes) -> int:
        with self._snapshot():
            return self._estimate_gas(sender, to, value, data)

    def _estimate_gas(self, sender: str, to: str, value: int, data: bytes) -> int:
        chain, _ = self._view()
        vm = chain.get_vm()
        canonical_sender = to_canonical_address(sender)
        tx = vm.create_unsigned_transaction(
            nonce=vm.state.get_nonce(canonical_sender),
            gas_price=0,
            gas=ESTIMATE_CAP,
            to=to_canonical_address(to),
            value=value,
            data=data,
        )
        spoof = SpoofTransaction(tx, from_=canonical_sender)
        try:
            with vm.in_costless_state() as state:
                return least_gas(state, spoof, ESTIMATE_CAP)
        except EstimateFailed as exc:  # a revert, or more gas than any transaction the engine sends
            raise EstimateReverted(f"eth_local: the call reverts: {exc}") from exc

    def receipt(self, tx_hash: str) -> Receipt | None:
        chain, _ = self._view()
        key = bytes.fromhex(tx_hash.removeprefix("0x"))
        try:
            number, index = chain.get_canonical_transaction_index(key)
        except Exception:  # TransactionNotFound: pending, dropped or unknown
            return None
        block = chain.get_canonical_block_by_number(number)
        receipts = block.get_receipts(chain.chaindb)
        receipt = receipts[index]
        previous = receipts[index - 1].gas_used if index else 0
        tx = block.transactions[index]
        base_fee = block.header.base_fee_per_gas
        price = min(tx.max_fee_per_gas, base_fee + tx.max_priority_fee_per_gas)
        return Receipt(
            tx_hash=_hex(key),
            block_number=number,
            block_hash=_hex(block.hash),
            success=_status_ok(receipt),
            gas_used=receipt.gas_used - previous,
            effective_gas_price=price,
            transfers=tuple(
                (
                    to_checksum_address(entry.address),
                    to_checksum_address(entry.topics[1].to_bytes(32, "big")[-20:]),
                    to_checksum_address(entry.topics[2].to_bytes(32, "big")[-20:]),
                    int.from_bytes(entry.data, "big"),
                )
                for entry in receipt.logs
                if len(entry.topics) == 3 and entry.topics[0] == TRANSFER_TOPIC
            ),
        )

    def native_transfers(self, number: int) -> list[NativeTransfer]:
        chain, _ = self._view()
        block = chain.get_canonical_block_by_number(number)
        receipts = block.get_receipts(chain.chaindb)
        return [
            NativeTransfer(
                tx_hash=_hex(tx.hash),
                block_number=number,
                block_hash=_hex(block.hash),
                sender=to_checksum_address(tx.sender),
                to=to_checksum_address(tx.to),
                value=tx.value,
                success=_status_ok(receipt),
            )
            for tx, receipt in zip(block.transactions, receipts, strict=True)
            if tx.value > 0 and tx.to
        ]

    def token_transfers(self, from_block: int, to_block: int, contracts: list[str]) -> list[TokenTransfer]:
        wanted = {to_canonical_address(c) for c in contracts}
        if not wanted:
            return []
        chain, _ = self._view()
        out = []
        top = min(to_block, chain.get_canonical_head().block_number)
        for number in range(from_block, top + 1):
            block = chain.get_canonical_block_by_number(number)
            log_index = 0
            for tx, receipt in zip(block.transactions, block.get_receipts(chain.chaindb), strict=True):
                for entry in receipt.logs:
                    if (
                        entry.address in wanted
                        and len(entry.topics) == 3
                        and entry.topics[0] == TRANSFER_TOPIC
                    ):
                        out.append(
                            TokenTransfer(
                                tx_hash=_hex(tx.hash),
                                block_number=number,
                                block_hash=_hex(block.hash),
                                log_index=log_index,
                                contract=to_checksum_address(entry.address),
                                sender=to_checksum_address(entry.topics[1].to_bytes(32, "big")[-20:]),
                                to=to_checksum_address(entry.topics[2].to_bytes(32, "big")[-20:]),
                                value=int.from_bytes(entry.data, "big"),
                            )
                        )
                    log_index += 1
        return out

    def account_transactions(self, sender: str, from_block: int, to_block: int) -> list[ChainTransaction]:
        wanted = to_canonical_address(sender)
        chain, _ = self._view()
        out = []
        for number in range(max(from_block, 0), min(to_block, chain.get_canonical_head().block_number) + 1):
            for tx in chain.get_canonical_block_by_number(number).transactions:
                if tx.sender != wanted:
                    continue
                out.append(
                    ChainTransaction(
                        tx_hash=_hex(tx.hash),
                        block_number=number,
                        nonce=int(tx.nonce),
                        to=to_checksum_address(tx.to) if tx.to else None,
                        value=int(tx.value),
                        data=bytes(tx.data),
                        raw=bytes(tx.encode()),
                    )
                )
        return out

    # -- the pool ----------------------------------------------------------------------------

    def send_raw_transaction(self, raw: bytes) -> str:
        with self._write() as conn:
            tx_hash = self._admit(conn, bytes(raw))
        self._wake.set()
        return tx_hash

    def _admit(self, conn: sqlite3.Connection, raw: bytes) -> str:
        """Validate like a node and put into the pool (inside the caller's write transaction)."""
        chain, _ = self._view()
        vm = chain.get_vm()
        try:
            tx = vm.get_transaction_builder().decode(raw)
            tx.validate()  # signature, intrinsic gas, field ranges
        except Exception as exc:
            raise TransactionRejected(f"invalid transaction: {exc}") from exc
        tx_hash = _hex(tx.hash)
        if tx.chain_id != NETWORK_ID:
            raise TransactionRejected(f"invalid chain id {tx.chain_id} (this chain is {NETWORK_ID})")
        if tx.gas > GAS_LIMIT:
            raise TransactionRejected("exceeds block gas limit")
        try:
            chain.get_canonical_transaction_index(tx.hash)
            return tx_hash  # already mined: the same bytes again are not an error
        except Exception:
            pass
        sender = tx.sender
        state = vm.state
        if tx.nonce < state.get_nonce(sender):
            raise TransactionRejected("nonce too low", Rejection.NONCE_USED)
        if state.get_balance(sender) < tx.gas * tx.max_fee_per_gas + tx.value:
            raise TransactionRejected(
                "insufficient funds for gas * price + value", Rejection.INSUFFICIENT_FUNDS
            )
        row = conn.execute(
            "SELECT hash, max_fee, tip FROM pool WHERE sender = ? AND nonce = ?", (sender, tx.nonce)
        ).fetchone()
        if row is not None:
            if bytes(row[0]) == tx.hash:
                return tx_hash
            if tx.max_fee_per_gas < int(row[1]) * REPLACEMENT_BUMP or (
                tx.max_priority_fee_per_gas < int(row[2]) * REPLACEMENT_BUMP
            ):
                raise TransactionRejected("replacement transaction underpriced", Rejection.UNDERPRICED)
            conn.execute("DELETE FROM pool WHERE hash = ?", (row[0],))
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM pool").fetchone()[0]
        conn.execute(
            "INSERT INTO pool (hash, sender, nonce, raw, max_fee, tip, seq) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (tx.hash, sender, tx.nonce, raw, str(tx.max_fee_per_gas), str(tx.max_priority_fee_per_gas), seq),
        )
        return tx_hash

    def pending_count(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM pool").fetchone()[0])

    # -- mining ------------------------------------------------------------------------------

    def _take_lease(self, seconds: float) -> bool:
        return self._lease.take(duration=timedelta(seconds=seconds))

    def _release_lease(self) -> None:
        self._lease.release()

    def mine(self) -> BlockRef:
        """Mine one block with what the pool holds that can run now (the caller holds the lease)."""
        with self._mine_lock:
            conn = self._conn()
            store = _Store(conn)
            chain: Any = _PosChain(AtomicDB(store))
            vm = chain.get_vm()
            rows = conn.execute("SELECT hash, sender, nonce, raw FROM pool ORDER BY seq").fetchall()
            included: list[bytes] = []
            stale: list[bytes] = []
            gas_left = GAS_LIMIT
            base_fee = chain.header.base_fee_per_gas
            progress = True
            waiting = [(bytes(h), bytes(s), int(n), bytes(r)) for h, s, n, r in rows]
            while progress and waiting:  # a sender's later nonces may become runnable in the same block
                progress = False
                later = []
                for tx_hash, sender, nonce, raw in waiting:
                    expected = chain.get_vm().state.get_nonce(sender)
                    if nonce < expected:
                        stale.append(tx_hash)
                        continue
                    tx: SignedTransactionAPI = vm.get_transaction_builder().decode(raw)
                    if nonce > expected or tx.max_fee_per_gas < base_fee or tx.gas > gas_left:
                        later.append((tx_hash, sender, nonce, raw))
                        continue
                    try:
                        chain.apply_transaction(tx)
                    except Exception as exc:  # cannot pay any more (balance spent by an earlier one)
                        log.info("local chain drops %s: %s", _hex(tx_hash), exc)
                        stale.append(tx_hash)
                        continue
                    gas_left = GAS_LIMIT - chain.header.gas_used
                    included.append(tx_hash)
                    progress = True
                waiting = later
            block = chain.mine_block(mix_hash=os.urandom(32))
            conn.execute("BEGIN IMMEDIATE")
            try:
                store.flush()
                conn.executemany("DELETE FROM pool WHERE hash = ?", [(h,) for h in included + stale])
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            self._last_included = len(included)
            return BlockRef(block.number, _hex(block.hash), block.header.timestamp)

    def run_miner(
        self,
        stop: threading.Event,
        *,
        waits: Callable[[], bool] = lambda: False,
        timer: MinerTimer | None = None,
    ) -> None:
        """Mine inside ``appliance serve`` while holding the miner lease, and only while something
        needs blocks: transactions in the pool (a block sooner, but not more often than
        MIN_BLOCK_GAP, when new ones arrive) or ``waits()`` (a payout or deposit of the engine
        waiting for confirmations: a block every ``block_seconds``). Idle, it mines nothing and
        looks again every IDLE_POLL seconds (the pool may be filled by another process, the engine
        database by another serving process). A block's timestamp is the time it is mined, so the
        first block after a quiet day is dated now, and timestamps only increase."""
        timer = timer or MinerTimer()
        lease_seconds = max(LEASE_SECONDS, 3 * self.block_seconds)
        last = float("-inf")
        renewed = 0.0
        holding = False
        failures = 0  # steps failed in a row: each waits longer (a full disk, a broken file)
        while not stop.is_set():
            now = timer.monotonic()
            pause = IDLE_POLL
            try:
                if not holding or now - renewed > lease_seconds / 3:
                    holding = self._take_lease(lease_seconds)
                    renewed = now
                if not holding:
                    timer.wait(stop, IDLE_POLL)  # another process mines; try again when its lease may expire
                    continue
                woken = self._wake.is_set()
                self._wake.clear()
                pending = self.pending_count() > 0
                wanted = pending or waits()
                gap = MIN_BLOCK_GAP if pending and (woken or self._last_included) else self.block_seconds
                if wanted and now - last >= gap:
                    self.mine()
                    last = timer.monotonic()
                if wanted:
                    pause = max(0.0, min(gap - (timer.monotonic() - last), IDLE_POLL))
            except Exception as exc:
                failures += 1
                faults.log_failure(log, exc, f"a local chain miner step ({failures} in a row, retried)")
                timer.wait(stop, failure_pause(failures, IDLE_POLL))
                continue
            failures = 0
            timer.wait(self._wake, pause)
            if self._wake.is_set():  # a transaction arrived: let a few more join it, then mine
                timer.wait(stop, max(0.0, MIN_BLOCK_GAP - (timer.monotonic() - last)))
        if holding:
            try:
                self._release_lease()
            except sqlite3.Error:
                pass

    # -- compaction ----------------------------------------------------------------------------

    def compact(self, *, keep_recent: int = KEEP_RECENT, batch: int = 2000) -> dict[str, int]:
        """Reclaim what old empty blocks hold: for each canonical block from 1 up to ``keep_recent``
        below the head that carries no transaction and no withdrawal, its header moves to
        ``kv_packed`` deflated (the same bytes come back: hashes, timestamps, parent links and the
        JSON-RPC answers do not change) and its total-difficulty score (read by py-evm only for the
        head and its parent) is deleted; then the file is VACUUMed. Kept: every header, the
        number-to-hash index, blocks with transactions (bodies, receipts, the transaction index),
        all state, the pool and the lease. Runs holding the miner lease, so it refuses while
        ``serve`` (or a faucet) mines: ChainBusy."""
        if not self._take_lease(LEASE_SECONDS):
            raise ChainBusy(
                "the embedded chain's miner lease is held: appliance serve (or a faucet) is using "
                f"{self.path}; stop it, then compact"
            )
        try:
            before = self._file_bytes()
            chain, _ = self._view()
            head = int(chain.get_canonical_head().block_number)
            packed = 0
            for start in range(1, head - keep_recent + 1, batch):
                self._keep_lease(LEASE_SECONDS)
                with self._write() as conn:
                    packed += self._pack_range(conn, start, min(start + batch, head - keep_recent + 1))
            # VACUUM rewrites the whole file and cannot pause to renew the lease: take it for long
            # enough (a process that dies holding it frees it at once: holder_gone).
            self._keep_lease(VACUUM_LEASE_SECONDS)
            conn = self._conn()
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return {
                "headBlock": head,
                "blocksPacked": packed,
                "bytesBefore": before,
                "bytesAfter": self._file_bytes(),
            }
        finally:
            self._release_lease()

    def _keep_lease(self, seconds: float) -> None:
        if not self._take_lease(seconds):
            raise ChainBusy(f"the embedded chain's miner lease of {self.path} was taken while compacting")

    @staticmethod
    def _pack_range(conn: sqlite3.Connection, start: int, stop: int) -> int:
        packed = 0
        for number in range(start, stop):
            key = SchemaV1.make_block_number_to_hash_lookup_key(BlockNumber(number))
            row = conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
            if row is None:
                continue
            block_hash = rlp.decode(bytes(row[0]))
            row = conn.execute("SELECT value FROM kv WHERE key = ?", (block_hash,)).fetchone()
            if row is None:
                continue  # packed by an earlier compact
            raw = bytes(row[0])
            fields = rlp.decode(raw)
            # Cancun header fields: 4 is the transactions root, 16 the withdrawals root.
            if fields[4] != BLANK_ROOT_HASH or (len(fields) > 16 and fields[16] != BLANK_ROOT_HASH):
                continue
            conn.execute(
                "INSERT OR REPLACE INTO kv_packed (key, value) VALUES (?, ?)", (block_hash, _pack(raw))
            )
            conn.execute("DELETE FROM kv WHERE key = ?", (block_hash,))
            conn.execute(
                "DELETE FROM kv WHERE key = ?", (SchemaV1.make_block_hash_to_score_lookup_key(block_hash),)
            )
            packed += 1
        return packed

    def _file_bytes(self) -> int:
        return sum(os.path.getsize(f) for f in (self.path, Path(f"{self.path}-wal")) if os.path.exists(f))

    # -- the faucet --------------------------------------------------------------------------

    def faucet(self, asset: str, to: str, amount: int, *, timeout: float = 60.0) -> tuple[str, int]:
        """Credit ``to`` with ``amount`` minor units of ETH or USDC; returns the transaction hash and
        the number of the block that included it. Mines that block itself when no process holds the
        miner lease, else waits for the miner."""
        if asset not in ("ETH", "USDC"):
            raise ChainError(f"asset {asset} is not on eth_local (ETH, USDC)")
        faucet = to_canonical_address(FAUCET.address)
        with self._write() as conn:  # the faucet's nonce and its pool entry, serialised across processes
            chain, _ = self._view()
            base_fee = int(chain.header.base_fee_per_gas)
            nonce = int(chain.get_vm().state.get_nonce(faucet))
            row = conn.execute("SELECT MAX(nonce) FROM pool WHERE sender = ?", (faucet,)).fetchone()
            if row[0] is not None:
                nonce = max(nonce, int(row[0]) + 1)
            if asset == "ETH":
                raw = self._faucet_tx(nonce, to, amount, b"", 21_000, base_fee)
            else:
                data = MINT + bytes(12) + to_canonical_address(to) + amount.to_bytes(32, "big")
                raw = self._faucet_tx(nonce, self.usdc_contract, 0, data, 120_000, base_fee)
            tx_hash = self._admit(conn, raw)
        self._wake.set()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._take_lease(5.0):
                try:
                    self.mine()
                finally:
                    self._release_lease()
            receipt = self.receipt(tx_hash)
            if receipt is not None:
                if not receipt.success:
                    raise ChainError(
                        f"the faucet transaction {tx_hash} reverted (USDC supply would overflow 2^256)"
                    )
                return tx_hash, receipt.block_number
            time.sleep(0.1)
        raise ChainError(f"the faucet transaction {tx_hash} was not mined within {timeout:.0f} s")


def _contract_address(sender: str, nonce: int) -> str:
    return to_checksum_address(keccak(rlp.encode([to_canonical_address(sender), nonce]))[-20:])


def usdc_contract() -> str:
    """The embedded chain's USDC contract: the faucet's first deployment, the same on every copy."""
    return _contract_address(FAUCET.address, 0)
