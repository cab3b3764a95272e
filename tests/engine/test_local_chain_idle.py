"""The embedded chain mines only while something needs blocks, and `appliance chain compact` packs
what old empty blocks hold. The miner runs on a fast clock (MinerTimer): a simulated day in seconds."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.chain.local import FAUCET, IDLE_POLL, ChainBusy, LocalChain, MinerTimer
from appliance.engine.chain.local_rpc import LocalRpc
from appliance.engine.chain.waits import engine_waits
from appliance.engine.db import database
from appliance.engine.models import Deposit
from appliance.settings import Settings
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, harness_settings, make_harness
from tests.engine.test_deposits import _mine, address_for, watch

DEST = "0x00000000000000000000000000000000000000d7"
DAY = 86_400.0
MEGABYTE = 1_000_000
QUIET = 7_200.0  # two simulated hours without anything to mine


class FastTimer(MinerTimer):
    """Simulated seconds: a wait returns at once, its timeout added to the clock; the run stops at
    ``until`` (or when ``check``, asked every simulated hour, says so: a regression fails fast)."""

    def __init__(
        self, stop: threading.Event, until: float, check: Callable[[], bool] = lambda: False
    ) -> None:
        self.now = 0.0
        self.stop = stop
        self.until = until
        self.check = check
        self.hour = 0
        self.at: list[tuple[float, Callable[[], None]]] = []  # things to do at a simulated time

    def monotonic(self) -> float:
        return self.now

    def wait(self, event: threading.Event, seconds: float) -> bool:
        if event.is_set():
            return True
        self.now += max(seconds, 0.001)
        for entry in [e for e in self.at if e[0] <= self.now]:
            self.at.remove(entry)
            entry[1]()
        if int(self.now // 3600) != self.hour:
            self.hour = int(self.now // 3600)
            if self.check():
                self.stop.set()
        if self.now >= self.until:
            self.stop.set()
        return event.is_set()


def settled_bytes(chain: LocalChain) -> int:
    """The file's size with the write-ahead log folded in (what the chain holds, not WAL traffic)."""
    chain._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return chain._file_bytes()


@pytest.fixture
def chain(tmp_path: Path):
    local = LocalChain(tmp_path / "chain" / "eth_local.db")
    yield local
    local.close()


def test_an_idle_miner_mines_nothing_and_its_file_grows_less_than_a_megabyte_in_a_simulated_day(
    chain: LocalChain,
) -> None:
    head = chain.head()
    before = settled_bytes(chain)
    stop = threading.Event()
    timer = FastTimer(stop, DAY, check=lambda: settled_bytes(chain) - before > MEGABYTE)
    chain.run_miner(stop, waits=lambda: False, timer=timer)
    assert timer.now >= DAY, "the file grew past a megabyte before the simulated day ended"
    assert chain.head() == head
    assert settled_bytes(chain) - before < MEGABYTE


def test_the_miner_mines_while_the_engine_waits_and_for_a_transaction_sent_elsewhere_then_stops(
    chain: LocalChain,
) -> None:
    start = chain.head().number
    waiting = {"until": 30.0}
    stop = threading.Event()
    timer = FastTimer(stop, 600.0)
    other = LocalChain(chain.path)  # another process's pool entry: no wake-up reaches this miner
    raw = other._faucet_tx(other.nonce(FAUCET.address), DEST, 5, b"", 21_000, 10**10)
    sent: dict[str, str] = {}
    timer.at.append((100.0, lambda: sent.update(hash=other.send_raw_transaction(raw))))
    try:
        chain.run_miner(stop, waits=lambda: timer.now < waiting["until"], timer=timer)
    finally:
        other.close()
    receipt = chain.receipt(sent["hash"])
    assert receipt is not None and chain.balance(DEST) == 5
    # one block a second for the 30 s the engine waited, then the transaction's block, then nothing
    assert 29 <= receipt.block_number - start - 1 <= 31
    assert chain.head().number == receipt.block_number


def test_a_miner_whose_steps_keep_failing_waits_longer_each_time_and_mines_again_once_they_pass(
    chain: LocalChain,
) -> None:
    # A full disk or a broken file: the old loop tried (and logged) a step every second for as long
    # as it lasted. Now the waits double up to a minute, and the first good step ends the back-off.
    failed: list[float] = []
    start = chain.head().number

    def waits() -> bool:
        if timer.now < 3_600.0:
            failed.append(timer.now)
            raise sqlite3.OperationalError("database or disk is full")
        return True

    stop = threading.Event()
    timer = FastTimer(stop, 3_600.0 + 10.0)
    chain.run_miner(stop, waits=waits, timer=timer)
    gaps = [later - earlier for earlier, later in itertools.pairwise(failed)]
    assert gaps[:7] == pytest.approx([1, 2, 4, 8, 16, 32, 60], abs=0.01)
    assert 60 <= len(failed) <= 70, len(failed)  # about one a minute for the hour, not 3,600
    assert chain.head().number > start  # mining again once the fault passed


def test_after_a_quiet_spell_the_next_block_is_dated_when_it_is_mined(
    chain: LocalChain, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = chain.head().timestamp
    monkeypatch.setattr("eth._utils.headers.eth_now", lambda: real + 10)
    first = chain.mine()
    assert first.timestamp == real + 10
    stop = threading.Event()
    timer = FastTimer(stop, QUIET + 60)
    monkeypatch.setattr("eth._utils.headers.eth_now", lambda: real + 10 + int(timer.now))
    timer.at.append((QUIET, lambda: None))
    chain.run_miner(stop, waits=lambda: timer.now >= QUIET, timer=timer)
    resumed = chain.block(first.number + 1)
    assert resumed is not None
    assert real + 10 + QUIET <= resumed.timestamp <= real + 10 + QUIET + IDLE_POLL + 1
    stamps = [chain.block(n).timestamp for n in range(first.number, chain.head().number + 1)]  # type: ignore[union-attr]
    assert stamps == sorted(set(stamps))  # strictly increasing


def test_compact_packs_old_empty_blocks_and_the_chain_still_answers_blocks_balances_and_receipts(
    chain: LocalChain,
) -> None:
    tx_hash, tx_block = chain.faucet("USDC", DEST, 7)
    for _ in range(400):
        chain.mine()
    blocks = [chain.block(n) for n in range(chain.head().number + 1)]
    rpc = LocalRpc(chain)
    ask = {"jsonrpc": "2.0", "id": 1, "method": "eth_getBlockByNumber", "params": [hex(100), False]}
    old = rpc.answer(ask)
    assert old is not None and "result" in old and old["result"]["number"] == hex(100)
    before = settled_bytes(chain)
    result = chain.compact(keep_recent=20)
    assert result["blocksPacked"] == len(blocks) - 1 - 1 - 1 - 20  # not genesis, USDC, the faucet's
    assert result["bytesBefore"] >= before and result["bytesAfter"] < 0.6 * before
    assert [chain.block(n) for n in range(len(blocks))] == blocks
    assert rpc.answer(ask) == old
    assert chain.balance(DEST, chain.usdc_contract) == 7
    assert chain.receipt(tx_hash).block_number == tx_block  # type: ignore[union-attr]
    assert [t.value for t in chain.token_transfers(0, chain.head().number, [chain.usdc_contract])][-1] == 7
    chain.faucet("ETH", DEST, 3)  # and it goes on from a packed-below head
    assert chain.balance(DEST) == 3
    assert chain.compact(keep_recent=20)["blocksPacked"] <= 2  # what was packed stays packed


def test_compact_is_refused_while_another_process_holds_the_miner_lease(chain: LocalChain) -> None:
    serve = LocalChain(chain.path)
    try:
        assert serve._take_lease(30.0)
        with pytest.raises(ChainBusy, match="serve"):
            chain.compact()
    finally:
        serve.close()


def test_chain_compact_prints_json_and_refuses_while_serve_mines(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["chain", "compact", "--data-dir", str(tmp_path), "--json"]
    missing = runner.invoke(cli, base)
    assert missing.exit_code == 1 and "there is no local chain" in missing.output
    chain = LocalChain(tmp_path / "chain" / "eth_local.db")
    try:
        for _ in range(30):
            chain.mine()
        result = runner.invoke(cli, [*base, "--keep-recent", "5"])
        assert result.exit_code == 0, result.output
        answer = json.loads(result.output)
        assert answer["headBlock"] == "31" and answer["blocksPacked"] == 25
        assert answer["bytesAfter"] <= answer["bytesBefore"]
        assert chain._take_lease(30.0)  # as `appliance serve` holds it
        refused = runner.invoke(cli, base)
        assert refused.exit_code == 1 and "stop it, then compact" in refused.output
        assert runner.invoke(cli, [*base, "--keep-recent", "-1"]).exit_code == 2
    finally:
        chain.close()


def test_the_engine_waits_for_blocks_while_a_payout_or_a_deposit_is_short_of_its_confirmations(
    settings: Settings,
) -> None:
    harness = make_harness(harness_settings(settings, {}), _mine)
    waits = engine_waits("eth_local")
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    assert not waits()
    harness.submit("pyo_waits00001", 1234)
    assert not waits()  # REQUESTED: nothing on the chain yet
    harness.run_pass()
    assert harness.payout("pyo_waits00001").status in ("SIGNED", "BROADCAST") and waits()
    harness.until_status("pyo_waits00001", "COMPLETED")
    assert not waits()
    customer = address_for(harness, "customer-waits").json["address"]
    _, height = chain.faucet("USDC", customer, 777)
    watch(harness)
    with database.connection_context():
        assert Deposit.get(Deposit.block_height == height).status == "PENDING"
    assert waits()
    while waits():
        assert chain.head().number < height + 10, "the deposit never confirmed"
        chain.mine()
        watch(harness)
    with database.connection_context():
        assert Deposit.get(Deposit.block_height == height).status == "CONFIRMED"


def test_the_workers_of_serve_confirm_a_payout_and_a_deposit_with_the_miner_resting_between(
    settings: Settings,
) -> None:
    settings = harness_settings(
        settings, {"APPLIANCE_LOCAL_BLOCK_SECONDS": "0.2", "APPLIANCE_PAYOUT_WORKER_SECONDS": "0.05"}
    )
    harness = make_harness(settings, _mine)
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    stop = threading.Event()
    threads = [
        threading.Thread(target=fn, args=(stop,)) for _, fn in harness.app.extensions["engine"].workers
    ]
    for thread in threads:
        thread.start()
    try:
        harness.submit("pyo_resting0001", 4321)
        customer = address_for(harness, "customer-resting").json["address"]
        _, height = chain.faucet("USDC", customer, 555)  # mined by serve's miner (it holds the lease)

        def done() -> bool:
            with database.connection_context():
                deposit = Deposit.get_or_none(Deposit.block_height == height)
            return harness.payout("pyo_resting0001").status == "COMPLETED" and (
                deposit is not None and deposit.status == "CONFIRMED"
            )

        deadline = time.monotonic() + 60
        while not done():
            assert time.monotonic() < deadline, "the payout or the deposit did not confirm"
            time.sleep(0.1)
        assert not engine_waits("eth_local")()  # nothing waits: the miner rests from here on
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert chain.balance(customer, chain.usdc_contract) == 555


def test_a_transaction_waiting_for_a_nonce_gap_keeps_the_chain_at_one_block_per_block_seconds(
    chain: LocalChain,
) -> None:
    start = chain.head().number
    future = chain._faucet_tx(chain.nonce(FAUCET.address) + 1, DEST, 1, b"", 21_000, 10**10)
    chain.send_raw_transaction(future)  # nonce + 1: it waits until the gap closes, which it never does
    stop = threading.Event()
    timer = FastTimer(stop, 60.0)
    chain.run_miner(stop, timer=timer)
    assert chain.pending_count() == 1
    assert 55 <= chain.head().number - start <= 62  # not one per MIN_BLOCK_GAP (300 in a minute)
