"""The payout pipeline on the embedded EVM chain: ETH and USDC end to end, waiting for funds,
gas top-ups from the fee wallet, the workers of `appliance serve`, and SIGKILL at every step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from appliance.engine.chain.local import LocalChain
from appliance.engine.db import database
from appliance.engine.ledger import deployment
from appliance.engine.models import Broadcast, Payout, WebhookEvent
from appliance.settings import Settings, load_settings
from tests.conftest import BACKEND
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)

ROOT = Path(__file__).resolve().parents[2]


def local_chain(harness: Harness) -> LocalChain:
    return harness.app.extensions["engine"].chains.get("eth_local")


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


def test_the_harness_and_the_commands_it_starts_use_the_suites_engine_database(harness: Harness) -> None:
    settings = harness.app.extensions["engine"].settings
    scheme = "postgresql" if BACKEND == "postgres" else "sqlite"
    assert settings.engine_db_url.startswith(scheme + "://")
    # A subprocess or CLI call given only the data directory reads appliance.toml there.
    seen_by_a_command = load_settings({"data_dir": str(settings.data_dir)}, environ={})
    assert seen_by_a_command.engine_db_url == settings.engine_db_url


def dest(n: int) -> str:
    return f"0x{0xE000 + n:040x}"


def transfers_to(chain: LocalChain, address: str) -> int:
    head = chain.head().number
    native = sum(1 for n in range(1, head + 1) for t in chain.native_transfers(n) if t.to.lower() == address)
    tokens = sum(1 for t in chain.token_transfers(1, head, [chain.usdc_contract]) if t.to.lower() == address)
    return native + tokens


def test_an_eth_payout_on_the_embedded_chain_completes_after_its_confirmations(harness: Harness) -> None:
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_localeth01", 31337, destination=dest(1))
    harness.until_status("pyo_localeth01", "BROADCAST", mine=False)
    harness.mine()
    harness.run_pass()
    assert harness.payout("pyo_localeth01").status == "BROADCAST"  # 1 of the 2 confirmations
    harness.until_status("pyo_localeth01", "COMPLETED")
    detail = harness.detail("pyo_localeth01")
    assert chain.balance(dest(1)) == 31337
    assert transfers_to(chain, dest(1)) == 1
    assert chain.receipt(detail["txHash"]).success  # type: ignore[union-attr]
    assert detail["broadcast"]["wallet"] == PAYOUT_WALLET
    assert [a["outcome"] for a in detail["attempts"]] == ["SENT"]
    with database.connection_context():  # announced in the transaction of the final move
        [event] = [json.loads(e.payload) for e in WebhookEvent.select()]
    assert event["type"] == "payout.completed" and event["data"]["payoutId"] == "pyo_localeth01"
    assert event["data"]["txHash"] == detail["txHash"] and int(event["data"]["networkFeeMinor"]) > 0


def test_without_a_custody_key_the_engine_is_ready_and_payouts_wait_with_the_reason(
    settings: Settings,
) -> None:
    harness = make_harness(harness_settings(settings, {"APPLIANCE_CUSTODY_KEY": ""}), _mine)
    assert harness.signer.client.get("/health/ready").status_code == 200
    for n in range(3):
        harness.submit(f"pyo_nocustody{n}", 5)
    harness.run_pass()
    harness.run_pass()
    for n in range(3):
        detail = harness.detail(f"pyo_nocustody{n}")
        assert detail["status"] == "REQUESTED" and "appliance custody init" in detail["reason"]
    # Said once for all of them; none is leased or counted while the key is missing, so a
    # write-heavy queue does not grow three writes per payout per look.
    with database.connection_context():
        rows = list(Payout.select())
        noted_at = {p.updated_at for p in rows}
    assert [(p.work_attempts, p.lease_until) for p in rows] == [(0, None)] * 3
    harness.submit("pyo_nocustody3", 5)
    harness.run_pass()  # the new one is noted; the others are not written again
    with database.connection_context():
        rows = list(Payout.select().order_by(Payout.id))
    assert all("appliance custody init" in p.reason for p in rows)
    assert {p.updated_at for p in rows[:3]} == noted_at


def test_a_usdc_payout_gets_its_gas_from_the_fee_wallet_and_completes(harness: Harness) -> None:
    chain = local_chain(harness)
    chain.faucet("USDC", PAYOUT_WALLET, 5_000_000)
    chain.faucet("ETH", FEE_WALLET, ETHER)
    harness.submit("pyo_localusd01", 2_500_000, asset="USDC", destination=dest(2))
    harness.run_pass()
    assert "top-up" in harness.detail("pyo_localusd01")["reason"]
    harness.until_status("pyo_localusd01", "COMPLETED", seconds=60)
    assert chain.balance(dest(2), chain.usdc_contract) == 2_500_000
    assert chain.balance(PAYOUT_WALLET, chain.usdc_contract) == 2_500_000
    assert chain.balance(PAYOUT_WALLET) > 0  # the top-up arrived and paid the gas
    with database.connection_context():
        assert [b.purpose for b in Broadcast.select().order_by(Broadcast.id)] == ["gas_topup", "payout"]
        topup = Broadcast.get(Broadcast.purpose == "gas_topup")
        # The fee wallet paid the top-up's network fee: the deployment's cost, no operator's.
        assert int(topup.fee_minor) > 0
        assert deployment.costs() == {("eth_local", "ETH"): int(topup.fee_minor)}
    assert harness.detail("pyo_localusd01")["reason"] is None


def test_an_unfunded_payout_waits_then_completes_after_a_faucet(harness: Harness) -> None:
    chain = local_chain(harness)
    harness.submit("pyo_localwait1", 5, destination=dest(3))
    harness.run_pass()
    waiting = harness.detail("pyo_localwait1")
    assert waiting["status"] == "REQUESTED" and PAYOUT_WALLET in waiting["reason"]
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.skip_waits()
    harness.until_status("pyo_localwait1", "COMPLETED")
    assert chain.balance(dest(3)) == 5


def test_the_workers_of_serve_pay_with_the_miner_running(settings: Settings) -> None:
    settings = harness_settings(
        settings,
        {"APPLIANCE_LOCAL_BLOCK_SECONDS": "0.2", "APPLIANCE_PAYOUT_WORKER_SECONDS": "0.05"},
    )
    harness = make_harness(settings, _mine)
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    stop = threading.Event()
    threads = [
        threading.Thread(target=fn, args=(stop,)) for _, fn in harness.app.extensions["engine"].workers
    ]
    for thread in threads:
        thread.start()
    try:
        for n in range(3):
            harness.submit(f"pyo_serving{n:03d}", 100 + n, destination=dest(10 + n))
        deadline = time.monotonic() + 60
        while not all(harness.payout(f"pyo_serving{n:03d}").status == "COMPLETED" for n in range(3)):
            assert time.monotonic() < deadline, "the workers did not complete the payouts"
            time.sleep(0.1)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    for n in range(3):
        assert chain.balance(dest(10 + n)) == 100 + n


@pytest.mark.parametrize("point", ["signing", "signed", "sent", "receipt"])
@pytest.mark.parametrize("asset", ["ETH", "USDC"])
def test_a_worker_killed_at_any_step_leaves_exactly_one_transfer_per_payout(
    settings: Settings, point: str, asset: str
) -> None:
    settings = harness_settings(settings, {})
    harness = make_harness(settings, _mine)
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    chain.faucet("USDC", PAYOUT_WALLET, 10**9)
    for n in range(3):
        harness.submit(f"pyo_crash{n:05d}", 1000 + n, asset=asset, destination=dest(20 + n))
    env = {**os.environ, "APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, "PYTHONPATH": str(ROOT)}
    process = subprocess.run(
        [sys.executable, "-m", "tests.engine.crash_pipeline", str(settings.data_dir), point],
        env=env,
        cwd=ROOT,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert process.returncode == -9, process.stderr[-2000:]
    harness.drive(
        lambda: all(harness.payout(f"pyo_crash{n:05d}").status == "COMPLETED" for n in range(3)), seconds=60
    )
    contract = None if asset == "ETH" else chain.usdc_contract
    for n in range(3):
        assert chain.balance(dest(20 + n), contract) == 1000 + n
        assert transfers_to(chain, dest(20 + n)) == 1
    with database.connection_context():
        assert sorted(int(b.nonce) for b in Broadcast.select().where(Broadcast.purpose == "payout")) == [
            0,
            1,
            2,
        ]
        assert Payout.select().where(Payout.status != "COMPLETED").count() == 0
