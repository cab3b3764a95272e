"""The embedded EVM chain: real py-evm execution over its own SQLite file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from eth_account import Account

from appliance.cli import cli
from appliance.engine.chain.base import TransactionRejected
from appliance.engine.chain.contracts import artifact
from appliance.engine.chain.local import FAUCET, LocalChain

DEST = "0x00000000000000000000000000000000000000d7"


@pytest.fixture
def chain(tmp_path: Path):
    local = LocalChain(tmp_path / "chain" / "eth_local.db")
    yield local
    local.close()


def test_the_committed_usdc_bytecode_equals_a_fresh_compile_of_its_source() -> None:
    pytest.importorskip("vyper", reason="vyper is a development dependency (pip install -e .[dev])")
    from appliance.engine.chain.contracts.compile import compile_contract

    fresh = compile_contract("usdc")
    assert fresh["bytecode"] == artifact("usdc")["bytecode"]
    assert fresh["abi"] == artifact("usdc")["abi"]


def test_usdc_is_deployed_in_block_one_as_a_six_decimal_erc20(chain: LocalChain) -> None:
    assert chain.head().number == 1
    decimals = chain._call(chain._view()[0], chain.usdc_contract, bytes.fromhex("313ce567"))
    assert int.from_bytes(decimals, "big") == 6
    assert chain.balance(DEST, chain.usdc_contract) == 0


def test_the_faucet_credits_eth_and_usdc_beyond_2_64_and_reports_the_including_block(
    chain: LocalChain,
) -> None:
    eth_hash, eth_block = chain.faucet("ETH", DEST, 10**18)
    usdc_hash, usdc_block = chain.faucet("USDC", DEST, 2**70 + 1)
    assert chain.balance(DEST) == 10**18
    assert chain.balance(DEST, chain.usdc_contract) == 2**70 + 1
    assert chain.receipt(eth_hash).block_number == eth_block  # type: ignore[union-attr]
    assert chain.receipt(usdc_hash).block_number == usdc_block  # type: ignore[union-attr]
    [native] = chain.native_transfers(eth_block)
    assert (native.to, native.value, native.success) == (DEST, 10**18, True)
    [token] = chain.token_transfers(0, chain.head().number, [chain.usdc_contract])
    assert (token.to, token.value, token.log_index, token.tx_hash) == (DEST, 2**70 + 1, 0, usdc_hash)


def test_the_chain_and_its_balances_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "eth_local.db"
    first = LocalChain(path)
    first.faucet("ETH", DEST, 123)
    head = first.head()
    first.close()
    again = LocalChain(path)
    try:
        assert again.head() == head
        assert again.balance(DEST) == 123
        assert again.usdc_contract == first.usdc_contract
    finally:
        again.close()


def _signed(
    nonce: int, value: int = 1, max_fee: int = 10**10, tip: int = 10**9, key: bytes = FAUCET.key
) -> bytes:
    tx = {
        "type": 2,
        "chainId": 1337,
        "nonce": nonce,
        "to": DEST,
        "value": value,
        "data": b"",
        "gas": 21000,
        "maxFeePerGas": max_fee,
        "maxPriorityFeePerGas": tip,
    }
    return bytes(Account.sign_transaction(tx, key).raw_transaction)


def test_the_pool_refuses_what_a_node_refuses_and_takes_the_same_bytes_twice(chain: LocalChain) -> None:
    n = chain.nonce(FAUCET.address)  # the faucet deployed USDC with nonce 0
    raw = _signed(n)
    tx_hash = chain.send_raw_transaction(raw)
    assert chain.send_raw_transaction(raw) == tx_hash  # the same bytes again: the same hash
    with pytest.raises(TransactionRejected, match="underpriced"):
        chain.send_raw_transaction(_signed(n, value=2, max_fee=10**10 + 1))
    bumped = chain.send_raw_transaction(_signed(n, value=2, max_fee=2 * 10**10, tip=2 * 10**9))
    chain.mine()
    assert chain.receipt(tx_hash) is None and chain.receipt(bumped) is not None
    assert chain.balance(DEST) == 2
    assert chain.send_raw_transaction(_signed(n, value=2, max_fee=2 * 10**10, tip=2 * 10**9)) == bumped
    with pytest.raises(TransactionRejected, match="nonce too low"):
        chain.send_raw_transaction(_signed(n, value=3))
    pauper = Account.create()
    with pytest.raises(TransactionRejected, match="insufficient funds"):
        chain.send_raw_transaction(_signed(0, key=pauper.key))
    with pytest.raises(TransactionRejected, match="invalid"):
        chain.send_raw_transaction(b"\x02not a transaction")


def test_a_future_nonce_waits_in_the_pool_until_the_gap_closes(chain: LocalChain) -> None:
    n = chain.nonce(FAUCET.address)
    later = chain.send_raw_transaction(_signed(n + 1, value=5))
    chain.mine()
    assert chain.receipt(later) is None and chain.pending_count() == 1
    chain.send_raw_transaction(_signed(n, value=7))
    chain.mine()
    assert chain.receipt(later) is not None
    assert chain.balance(DEST) == 12


def test_the_miner_advances_while_the_engine_waits_and_a_faucet_elsewhere_waits_for_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "eth_local.db"
    miner = LocalChain(path, block_seconds=0.2)
    stop = threading.Event()
    thread = threading.Thread(target=miner.run_miner, args=(stop,), kwargs={"waits": lambda: True})
    thread.start()
    other = LocalChain(path)  # as `appliance chain faucet` in another process would
    try:
        start = miner.head().number
        deadline = time.monotonic() + 10
        while miner.head().number < start + 3:
            assert time.monotonic() < deadline, "the miner did not mine"
            time.sleep(0.05)
        assert not other._take_lease(5.0)  # the miner holds the lease
        tx_hash, block = other.faucet("ETH", DEST, 99)
        assert other.receipt(tx_hash).block_number == block  # type: ignore[union-attr]
    finally:
        stop.set()
        thread.join()
        other.close()
        miner.close()
    assert LocalChain(path).balance(DEST) == 99


MINER_SCRIPT = """
import sys
from appliance.engine.chain.local import FAUCET, LocalChain
chain = LocalChain(sys.argv[1])
chain._take_lease(60)
n = 0
while True:
    raw = chain._faucet_tx(chain.nonce(FAUCET.address), sys.argv[2], 1, b"", 21000, 10**9)
    chain.send_raw_transaction(raw)
    chain.mine()
    n += 1
    if n == 5:
        print("ready", flush=True)
"""


def test_a_miner_killed_mid_block_leaves_the_last_whole_block(tmp_path: Path) -> None:
    path = tmp_path / "eth_local.db"
    LocalChain(path).close()
    process = subprocess.Popen(
        [sys.executable, "-c", MINER_SCRIPT, str(path), DEST], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    time.sleep(0.3)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    chain = LocalChain(path)
    try:
        head = chain.head().number
        mined = sum(len(chain.native_transfers(n)) for n in range(2, head + 1))
        assert mined >= 5
        assert chain.balance(DEST) == mined  # every whole block counted, no half block
        waiting = chain.pending_count()  # a transaction submitted but not yet mined stays in the pool
        assert waiting <= 1
        chain.faucet("ETH", DEST, 1)  # and it goes on, mining what waited too
        assert chain.balance(DEST) == mined + waiting + 1
    finally:
        chain.close()


def test_chain_faucet_prints_the_transaction_and_its_block_and_refuses_remote_chains(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["chain", "faucet", "--data-dir", str(tmp_path), "--json", "--to", DEST]
    result = runner.invoke(cli, [*base, "--chain-id", "eth_local", "--asset", "USDC", "--amount", str(2**65)])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["txHash"].startswith("0x") and answer["blockHeight"].isdigit()
    chain = LocalChain(tmp_path / "chain" / "eth_local.db")
    try:
        assert chain.balance(DEST, chain.usdc_contract) == 2**65
    finally:
        chain.close()
    refused = runner.invoke(cli, [*base, "--chain-id", "eth_mainnet", "--asset", "ETH", "--amount", "1"])
    assert refused.exit_code != 0 and "eth_local" in refused.output
    for amount in ("0", "-1", "1.5", str(2**256)):
        bad = runner.invoke(cli, [*base, "--chain-id", "eth_local", "--asset", "ETH", "--amount", amount])
        assert bad.exit_code != 0, amount
