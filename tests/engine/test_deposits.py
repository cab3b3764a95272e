"""Deposit addresses and the deposit watcher on the embedded chain and on anvil."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from appliance.common import clock
from appliance.engine.custody import Custody
from appliance.engine.db import database
from appliance.engine.deposits.watcher import DepositWatcher
from appliance.engine.models import Deposit, WebhookEvent
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, running_anvil
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import ETHER, TEST_MNEMONIC, Harness, harness_settings, make_harness

ROOT = Path(__file__).resolve().parents[2]


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


def address_for(
    harness: Harness, account_ref: str, chain_id: str = "eth_local", signer: Signer | None = None
):
    return (signer or harness.signer).request(
        "POST", "/v1/deposit-addresses", {"accountRef": account_ref, "chainId": chain_id}
    )


def watch(harness: Harness) -> None:
    """A pass of the harness's one watcher (a second watcher would wait for the first one's lease)."""
    watcher = harness.app.extensions.setdefault(
        "test-watcher", DepositWatcher(harness.app.extensions["engine"].chains)
    )
    with database.connection_context():
        watcher.run_pass()


def events(kind: str) -> list[dict]:
    with database.connection_context():
        rows = WebhookEvent.select().where(WebhookEvent.event_type == kind).order_by(WebhookEvent.id)
        return [json.loads(r.payload) for r in rows]


def test_an_address_is_derived_once_per_account_and_chain_and_never_shared(harness: Harness) -> None:
    first = address_for(harness, "customer-1")
    assert first.status_code == 201
    body = first.json
    assert body["addressId"].startswith("waddr_") and body["accountRef"] == "customer-1"
    assert body["address"] == Custody(TEST_MNEMONIC).address(1, 0)  # account 1 + 0, index 0
    assert body["derivationIndex"] == "0"
    assert {a["assetCode"] for a in body["assets"]} == {"ETH", "USDC"}
    again = address_for(harness, "customer-1")
    assert again.status_code == 200 and again.json == body
    second = address_for(harness, "customer-2").json
    assert second["address"] == Custody(TEST_MNEMONIC).address(1, 1)
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    theirs = address_for(harness, "customer-1", signer=other).json
    assert theirs["address"] == Custody(TEST_MNEMONIC).address(2, 0)  # the next custody account
    assert theirs["address"] != body["address"]


def test_ten_simultaneous_requests_for_one_account_make_one_address(harness: Harness) -> None:
    barrier = threading.Barrier(10)
    answers: list[tuple[int, str]] = []

    def ask() -> None:
        barrier.wait()
        response = address_for(harness, "customer-race")
        answers.append((response.status_code, response.json["address"]))

    threads = [threading.Thread(target=ask) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(code for code, _ in answers) == [200] * 9 + [201]
    assert len({address for _, address in answers}) == 1


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"accountRef": "c1", "chainId": "eth_mainnet"}, 400),
        ({"accountRef": "c1", "chainId": "e!"}, 400),
        ({"accountRef": "", "chainId": "eth_local"}, 400),
        ({"accountRef": "a b", "chainId": "eth_local"}, 400),
        ({"accountRef": "x" * 129, "chainId": "eth_local"}, 400),
        ({"chainId": "eth_local"}, 400),
    ],
)
def test_a_malformed_or_unknown_field_is_400(harness: Harness, payload: dict, status: int) -> None:
    response = harness.signer.request("POST", "/v1/deposit-addresses", payload)
    assert response.status_code == status
    assert response.json["detail"]


def test_without_custody_the_address_request_is_503_but_only_after_the_signature(settings: Settings) -> None:
    harness = make_harness(harness_settings(settings, {"APPLIANCE_CUSTODY_KEY": ""}), _mine)
    unsigned = harness.signer.client.post(
        "/v1/deposit-addresses", json={"accountRef": "c1", "chainId": "eth_local"}
    )
    assert unsigned.status_code == 401
    assert address_for(harness, "c1").status_code == 503


def test_eth_and_usdc_deposits_are_recorded_once_and_confirmed_with_one_event_each(harness: Harness) -> None:
    assert harness.signer.request("GET", "/v1/deposits?accountRef=customer-1").status_code == 404
    address = address_for(harness, "customer-1").json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    eth_tx, eth_block = chain.faucet("ETH", address, 3 * ETHER)
    watch(harness)
    [eth] = harness.signer.request("GET", "/v1/deposits?accountRef=customer-1").json["transfers"]
    assert (eth["status"], eth["txHash"], eth["outputIndex"]) == (
        "PENDING",
        eth_tx,
        0,
    )  # 1 of 2 confirmations
    assert eth["amountMinor"] == str(3 * ETHER) and eth["blockHeight"] == str(eth_block)
    assert events("deposit.confirmed") == []
    usdc_tx, _ = chain.faucet("USDC", address, 2**70)  # its block is the ETH deposit's second confirmation
    watch(harness)
    listed = harness.signer.request("GET", "/v1/deposits?accountRef=customer-1").json
    assert listed["operatorId"] == "op_alpha0001" and listed["accountRef"] == "customer-1"
    by_asset = {t["assetCode"]: t for t in listed["transfers"]}
    assert by_asset["ETH"]["status"] == "CONFIRMED" and by_asset["USDC"]["status"] == "PENDING"
    assert by_asset["USDC"]["txHash"] == usdc_tx and by_asset["USDC"]["amountMinor"] == str(2**70)
    assert by_asset["USDC"]["outputIndex"] == 0  # the log index of its Transfer in the block
    chain.mine()
    watch(harness)
    watch(harness)
    listed = harness.signer.request("GET", "/v1/deposits?accountRef=customer-1&chainId=eth_local").json
    assert [t["status"] for t in listed["transfers"]] == ["CONFIRMED", "CONFIRMED"]
    confirmed = events("deposit.confirmed")
    assert sorted(e["data"]["assetCode"] for e in confirmed) == ["ETH", "USDC"]
    assert all(e["data"]["accountRef"] == "customer-1" and e["eventId"].startswith("evt_") for e in confirmed)
    with database.connection_context():
        assert Deposit.select().count() == 2


def test_another_operator_never_sees_the_deposits_of_an_account_with_the_same_reference(
    harness: Harness,
) -> None:
    address = address_for(harness, "shared-ref").json["address"]
    harness.app.extensions["engine"].chains.get("eth_local").faucet("ETH", address, 5)
    watch(harness)
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    assert other.request("GET", "/v1/deposits?accountRef=shared-ref").status_code == 404
    address_for(harness, "shared-ref", signer=other)
    assert other.request("GET", "/v1/deposits?accountRef=shared-ref").json["transfers"] == []


WATCHER_SCRIPT = """
import os, sys
from datetime import timedelta
from appliance.engine.app import create_app
from appliance.engine.db import database
from appliance.engine.deposits.watcher import DepositWatcher
from appliance.settings import load_settings
app = create_app(load_settings({"data_dir": sys.argv[1]}, environ=dict(os.environ)))
watcher = DepositWatcher(app.extensions["engine"].chains, batch=1, lease=timedelta(seconds=1))
while True:
    with database.connection_context():
        watcher.run_pass()
"""


def recorded() -> int:
    with database.connection_context():
        return Deposit.select().count()


def test_a_watcher_killed_and_restarted_misses_and_doubles_nothing(settings: Settings) -> None:
    settings = harness_settings(settings, {})
    harness = make_harness(settings, _mine)
    address = address_for(harness, "customer-kill").json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    env = {**os.environ, "APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, "PYTHONPATH": str(ROOT)}
    sent = []
    for round_ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-c", WATCHER_SCRIPT, str(settings.data_dir)], env=env, cwd=ROOT
        )
        before = recorded()
        for n in range(6):
            sent.append(chain.faucet("ETH" if n % 2 else "USDC", address, 100 + len(sent))[0])
        deadline = time.monotonic() + 30
        while recorded() == before:  # the child is scanning: kill it in the middle of its work
            assert time.monotonic() < deadline, "the watcher did not start"
            time.sleep(0.02)
        time.sleep(0.05 * round_)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    for _ in range(3):
        chain.mine()
    clock.advance(timedelta(minutes=1))  # the killed child's lease has expired
    for _ in range(40):  # the remaining blocks, one per pass in the child; here all at once
        watch(harness)
    with database.connection_context():
        rows = list(Deposit.select())
    assert sorted(r.tx_hash for r in rows) == sorted(sent)
    assert all(r.status == "CONFIRMED" for r in rows)
    assert sorted(e["data"]["txHash"] for e in events("deposit.confirmed")) == sorted(sent)


def test_a_reorg_on_anvil_retracts_a_confirmed_deposit_and_announces_the_correction(
    settings: Settings,
) -> None:
    with running_anvil(free_port()) as node:
        chains = [
            {
                "id": "eth_anvil",
                "rpc_url": node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2}],
            }
        ]
        settings = harness_settings(
            settings, {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
        )
        harness = make_harness(settings, lambda app: node.mine())
        node.mine(5)
        address = address_for(harness, "customer-reorg", "eth_anvil").json["address"]
        payer = "0x00000000000000000000000000000000000b0b00"
        node.set_balance(payer, ETHER)
        node.rpc("anvil_impersonateAccount", payer)
        tx_hash = node.rpc("eth_sendTransaction", {"from": payer, "to": address, "value": hex(777)})
        node.mine()  # automine put it in a block; one more makes two confirmations
        watch(harness)
        watch(harness)
        [transfer] = harness.signer.request("GET", "/v1/deposits?accountRef=customer-reorg").json["transfers"]
        assert (transfer["txHash"], transfer["status"]) == (tx_hash, "CONFIRMED")
        node.rpc("anvil_reorg", 3, [])  # its block and the next are replaced by empty ones
        watch(harness)
        [transfer] = harness.signer.request("GET", "/v1/deposits?accountRef=customer-reorg").json["transfers"]
        assert transfer["status"] == "RETRACTED"
        [retracted] = events("deposit.retracted")
        assert retracted["data"]["txHash"] == tx_hash and retracted["data"]["status"] == "RETRACTED"
        assert len(events("deposit.confirmed")) == 1  # not silently forgotten: a correcting event follows


@pytest.mark.postgres
def test_deposits_are_recorded_and_confirmed_on_postgresql_too(settings: Settings, migrated_postgres) -> None:
    """The watcher's record of scanned blocks is an upsert both databases know: it was SQLite's
    INSERT OR REPLACE, which PostgreSQL refuses, so every pass failed there and no deposit was
    ever recorded (found by the two-node test, tests/nodes)."""
    environ = {"APPLIANCE_ENGINE_DATABASE": migrated_postgres("migrations.engine")}
    harness = make_harness(harness_settings(settings, environ), _mine)
    address = address_for(harness, "customer-pg").json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    tx_hash, _ = chain.faucet("ETH", address, 5 * ETHER)
    watch(harness)
    chain.mine()
    watch(harness)
    [transfer] = harness.signer.request("GET", "/v1/deposits?accountRef=customer-pg").json["transfers"]
    assert (transfer["txHash"], transfer["status"], transfer["amountMinor"]) == (
        tx_hash,
        "CONFIRMED",
        str(5 * ETHER),
    )
    assert [e["data"]["txHash"] for e in events("deposit.confirmed")] == [tx_hash]
    database.close_all()
