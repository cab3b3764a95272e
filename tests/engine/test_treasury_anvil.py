"""Treasury positions and reconciliation against a real node (anvil), with and without Multicall3."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from eth_utils import to_checksum_address

from appliance.cli import cli
from appliance.common import clock
from appliance.engine.chain.contracts import artifact
from appliance.engine.db import database
from appliance.engine.models import ChainCursor, TreasuryBalance, TreasuryFinding
from appliance.engine.treasury.bulk import MULTICALL3, BulkReader
from appliance.engine.treasury.job import ReconcileJob, treasury_gauges
from appliance.engine.treasury.positions import all_positions
from appliance.engine.treasury.reconcile import acknowledge, reconcile
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)
from tests.engine.test_deposits import address_for, watch

CHAIN = "eth_anvil"
MINTER = "0x00000000000000000000000000000000000a11ce"
DEST = "0x00000000000000000000000000000000000000d1"
OUTSIDER = to_checksum_address("0x00000000000000000000000000000000000bad00")
MULTICALL_RUNTIME = json.loads((Path(__file__).parent / "multicall3.json").read_text())["runtime"]


def chains_json(node: Anvil, token: str, low_balance: int | None = None) -> str:
    eth: dict[str, Any] = {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2}
    if low_balance is not None:
        eth["low_balance_minor"] = str(low_balance)
    usdc = {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": token}
    return json.dumps(
        [
            {
                "id": CHAIN,
                "rpc_url": node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [eth, usdc],
            }
        ]
    )


class Setup:
    def __init__(self, node: Anvil, token: str, harness: Harness, environ: dict[str, str]) -> None:
        self.node = node
        self.token = token
        self.harness = harness
        self.environ = environ

    @property
    def runtime(self) -> Any:
        return self.harness.app.extensions["engine"]

    def mint(self, to: str, amount: int) -> None:
        data = "0x40c10f19" + "00" * 12 + to[2:].lower() + f"{amount:064x}"
        self.node.rpc(
            "eth_sendTransaction", {"from": MINTER, "to": self.token, "data": data, "gas": hex(200_000)}
        )

    def send_eth(self, to: str, wei: int) -> None:
        self.node.rpc("eth_sendTransaction", {"from": MINTER, "to": to, "value": hex(wei)})

    def token_balance(self, address: str) -> int:
        data = "0x70a08231" + "00" * 12 + address[2:].lower()
        return int(self.node.rpc("eth_call", {"to": self.token, "data": data}, "latest"), 16)

    def ready_treasury(self) -> tuple[int, str]:
        """/health/ready's status and treasury check, probed afresh (not the 1 s kept result)."""
        self.runtime.health.run(fresh=True)
        ready = self.harness.app.test_client().get("/health/ready")
        return ready.status_code, ready.json["checks"]["treasury"]

    def reconcile(self) -> dict[str, Any]:
        with database.connection_context():
            return reconcile(self.runtime.chains, self.runtime.custody)

    def watch_until_scanned(self) -> None:
        for _ in range(3):
            self.node.mine()
            watch(self.harness)


def make_setup(settings: Settings, node: Anvil, *, multicall: bool, low_balance: int | None = None) -> Setup:
    if multicall:
        node.rpc("anvil_setCode", MULTICALL3, MULTICALL_RUNTIME)
    node.rpc("anvil_impersonateAccount", MINTER)
    node.set_balance(MINTER, 1000 * ETHER)
    token = node.deploy(artifact("usdc")["bytecode"], MINTER)
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    node.set_balance(FEE_WALLET, ETHER)
    environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": chains_json(node, token, low_balance)}
    harness = make_harness(harness_settings(settings, environ), lambda app: node.mine())
    return Setup(node, token, harness, environ)


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.fixture(params=[True, False], ids=["multicall3", "batched-json-rpc"])
def setup(request: pytest.FixtureRequest, settings: Settings, node: Anvil) -> Setup:
    return make_setup(settings, node, multicall=request.param)


def test_positions_equal_the_chain_whether_read_through_multicall3_or_batched_json_rpc(setup: Setup) -> None:
    setup.mint(PAYOUT_WALLET, 7_000_000)
    paid = address_for(setup.harness, "customer-paid", CHAIN).json["address"]
    address_for(setup.harness, "customer-empty", CHAIN)
    setup.send_eth(paid, 123_456)
    setup.mint(paid, 5_000)
    setup.watch_until_scanned()
    with database.connection_context():
        rows = [p.body() for p in all_positions(setup.runtime.chains, setup.runtime.custody)]
    chain = [
        {
            "chainId": CHAIN,
            "assetCode": code,
            "role": role,
            "address": address,
            "onChainMinor": str(
                setup.node.balance(address) if code == "ETH" else setup.token_balance(address)
            ),
            "expectedMinor": expected,
        }
        for role, address, code, expected in [
            ("payout", PAYOUT_WALLET, "ETH", "0"),
            ("payout", PAYOUT_WALLET, "USDC", "0"),
            ("fee", FEE_WALLET, "ETH", "0"),
            ("fee", FEE_WALLET, "USDC", "0"),
            ("deposit", paid, "ETH", "123456"),
            ("deposit", paid, "USDC", "5000"),
        ]
    ]
    assert rows == chain  # the empty deposit address is left out
    assert rows[0]["onChainMinor"] == str(10 * ETHER) and rows[1]["onChainMinor"] == "7000000"
    reader = BulkReader(setup.runtime.chains.get(CHAIN))
    reader.balances([(PAYOUT_WALLET, None)] * 1200)
    # After one eth_getCode (is Multicall3 there?), 1200 reads are three aggregate3 calls in one
    # HTTP request, or twelve batches of 100 requests.
    assert (reader.http_requests, reader.rpc_requests) in {(2, 4), (13, 1201)}


def test_the_treasury_command_answers_exactly_the_positions_document(
    setup: Setup, settings: Settings
) -> None:
    environ = {"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **setup.environ}
    result = CliRunner().invoke(
        cli, ["treasury", "--json", "--data-dir", str(settings.data_dir)], env=environ, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert list(body) == ["positions", "exposures"] and body["exposures"] == []
    assert [sorted(p) for p in body["positions"]] == [
        sorted(["chainId", "assetCode", "role", "address", "onChainMinor", "expectedMinor"])
    ] * 4
    assert body["positions"][0] == {
        "chainId": CHAIN,
        "assetCode": "ETH",
        "role": "payout",
        "address": PAYOUT_WALLET,
        "onChainMinor": str(10 * ETHER),
        "expectedMinor": "0",
    }


def test_reconcile_is_clean_after_normal_payouts_and_deposits(setup: Setup) -> None:
    setup.mint(PAYOUT_WALLET, 7_000_000)
    setup.harness.submit("pyo_treasury01", 12_345)
    setup.harness.submit("pyo_treasury02", 1_000, asset="USDC")
    setup.harness.until_status("pyo_treasury01", "COMPLETED")
    setup.harness.until_status("pyo_treasury02", "COMPLETED")
    customer = address_for(setup.harness, "customer-1", CHAIN).json["address"]
    setup.send_eth(customer, 5 * 10**15)
    setup.mint(customer, 250)
    setup.watch_until_scanned()
    report = setup.reconcile()
    assert report["findings"] == []
    assert report["checkedAt"].endswith("Z")
    assert setup.ready_treasury()[1] == "pass"


def test_an_outflow_signed_outside_the_engine_is_an_unknown_outflow_until_acknowledged(setup: Setup) -> None:
    setup.harness.submit("pyo_treasury03", 777)
    setup.harness.until_status("pyo_treasury03", "COMPLETED")
    assert setup.reconcile()["findings"] == []
    # Someone holding the key (a copied custody.key) pays from the payout wallet directly.
    nonce = int(setup.node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16)
    raw, tx_hash = setup.runtime.custody.key.sign_transaction(  # the bare key: no signer's policy
        0,
        0,
        {
            "chainId": NETWORK_ID,
            "nonce": nonce,
            "to": OUTSIDER,
            "value": 3 * ETHER,
            "gas": 21_000,
            "maxFeePerGas": 10**10,
            "maxPriorityFeePerGas": 10**9,
            "type": 2,
        },
    )
    setup.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    setup.node.mine(3)
    findings = setup.reconcile()["findings"]
    assert findings == [
        {
            "kind": "unknown_outflow",
            "chainId": CHAIN,
            "assetCode": "ETH",
            "address": PAYOUT_WALLET,
            "expectedMinor": "0",
            "actualMinor": str(3 * ETHER),
            "detail": findings[0]["detail"],
        }
    ]
    assert tx_hash in findings[0]["detail"] and f"nonce {nonce}" in findings[0]["detail"]
    assert setup.ready_treasury() == (503, "fail")
    gauges = {(m.name, tuple(s.labels.values())): s.value for m in treasury_gauges() for s in m.samples}
    assert gauges[("appliance_treasury_findings", ("unknown_outflow", "true"))] == 1
    # It stays (the nonce is spent for ever) until an administrator has looked at it.
    assert setup.reconcile()["findings"][0]["kind"] == "unknown_outflow"
    with database.connection_context():
        assert acknowledge(CHAIN, PAYOUT_WALLET, nonce, "test") == 1
        assert TreasuryFinding.get().acknowledged_by == "test"
    assert setup.reconcile()["findings"] == []
    assert setup.ready_treasury()[1] == "pass"


def test_a_deposit_the_watcher_did_not_record_is_reported_once_the_watcher_is_past_it(setup: Setup) -> None:
    customer = address_for(setup.harness, "customer-lost", CHAIN).json["address"]
    setup.watch_until_scanned()
    setup.send_eth(customer, 4_242)
    setup.mint(customer, 99)
    # Not scanned yet: the watcher is behind, which is not a finding.
    assert setup.reconcile()["findings"] == []
    head = int(setup.node.rpc("eth_blockNumber"), 16)
    with database.connection_context():  # the watcher skips those blocks (a bug, a lost write)
        ChainCursor.update(next_block=head + 1).execute()
    findings = setup.reconcile()["findings"]
    assert [
        (f["kind"], f["assetCode"], f["address"], f["expectedMinor"], f["actualMinor"]) for f in findings
    ] == [
        ("deposit_not_recorded", "ETH", customer, "0", "4242"),
        ("deposit_not_recorded", "USDC", customer, "0", "99"),
    ]
    assert setup.ready_treasury() == (503, "fail")


def test_a_completed_payout_the_chain_lost_is_payout_not_on_chain(setup: Setup) -> None:
    setup.node.mine(5)  # anvil refuses a reorg deeper than the chain is high
    setup.harness.submit("pyo_treasury04", 55)
    setup.harness.until_status("pyo_treasury04", "COMPLETED")
    tx_hash = setup.harness.payout("pyo_treasury04").tx_hash
    assert setup.reconcile()["findings"] == []
    setup.node.rpc("anvil_reorg", 4, [])
    assert setup.node.rpc("eth_getTransactionReceipt", tx_hash) is None
    kinds = [(f["kind"], f["expectedMinor"]) for f in setup.reconcile()["findings"]]
    assert ("payout_not_on_chain", "55") in kinds


def test_a_confirmed_deposit_left_for_an_hour_is_unswept_which_is_not_critical(setup: Setup) -> None:
    customer = address_for(setup.harness, "customer-old", CHAIN).json["address"]
    setup.send_eth(customer, 10**15)
    setup.watch_until_scanned()
    assert setup.reconcile()["findings"] == []
    clock.advance(timedelta(hours=1, minutes=1))
    findings = setup.reconcile()["findings"]
    assert [(f["kind"], f["address"], f["actualMinor"]) for f in findings] == [
        ("unswept", customer, str(10**15))
    ]
    assert setup.ready_treasury()[1] == "pass"


def test_a_transaction_not_mined_for_ten_minutes_is_a_stuck_transaction(setup: Setup) -> None:
    setup.node.rpc("evm_setAutomine", False)
    setup.harness.submit("pyo_treasury05", 66)
    setup.harness.until_status("pyo_treasury05", "BROADCAST", mine=False)
    assert setup.reconcile()["findings"] == []
    clock.advance(timedelta(minutes=11))
    findings = setup.reconcile()["findings"]
    assert [(f["kind"], f["address"]) for f in findings] == [("stuck_transaction", PAYOUT_WALLET)]
    assert setup.harness.payout("pyo_treasury05").tx_hash in findings[0]["detail"]


def test_a_payout_wallet_below_its_low_balance_trips_the_alarm(settings: Settings, node: Anvil) -> None:
    setup = make_setup(settings, node, multicall=True, low_balance=20 * ETHER)
    findings = setup.reconcile()["findings"]
    assert [
        (f["kind"], f["assetCode"], f["address"], f["expectedMinor"], f["actualMinor"]) for f in findings
    ] == [
        ("low_balance", "ETH", FEE_WALLET, str(20 * ETHER), str(ETHER)),  # by address
        ("low_balance", "ETH", PAYOUT_WALLET, str(20 * ETHER), str(10 * ETHER)),
    ]
    gauges = {(m.name, tuple(s.labels.values())): s.value for m in treasury_gauges() for s in m.samples}
    assert gauges[("appliance_treasury_low_balance", (CHAIN, "ETH", "payout", PAYOUT_WALLET))] == 1
    assert gauges[("appliance_treasury_low_balance", (CHAIN, "USDC", "payout", PAYOUT_WALLET))] == 0
    assert (
        gauges[("appliance_treasury_wallet_balance_minor", (CHAIN, "ETH", "payout", PAYOUT_WALLET))]
        == 10 * ETHER
    )
    # An alarm, not a loss: the deployment stays ready.
    assert setup.ready_treasury()[1] == "pass"
    node.set_balance(PAYOUT_WALLET, 30 * ETHER)
    node.set_balance(FEE_WALLET, 30 * ETHER)
    assert setup.reconcile()["findings"] == []


def test_the_serve_job_reconciles_once_per_interval_under_its_lease(settings: Settings, node: Anvil) -> None:
    setup = make_setup(settings, node, multicall=True)
    first = ReconcileJob(setup.runtime.chains, setup.runtime.custody, interval=timedelta(minutes=5))
    second = ReconcileJob(setup.runtime.chains, setup.runtime.custody, interval=timedelta(minutes=5))
    with database.connection_context():
        assert first.run_pass() == 1
        assert second.run_pass() == 0 and first.run_pass() == 0  # not due for five minutes
        clock.advance(timedelta(minutes=5, seconds=1))
        assert second.run_pass() == 1
    gauges = {m.name: m.samples for m in treasury_gauges()}
    assert gauges["appliance_treasury_reconciled_timestamp_seconds"][0].value > 0


def test_the_multicall3_call_data_and_answers_are_what_eth_abi_makes_of_them() -> None:
    from eth_abi import decode, encode

    from appliance.engine.treasury.bulk import decode_results, encode_calls

    calls = [(PAYOUT_WALLET, True, bytes(range(36))), (FEE_WALLET, False, b""), (OUTSIDER, True, bytes(70))]
    assert encode_calls(calls) == encode(["(address,bool,bytes)[]"], [calls])
    results = [(True, (12345).to_bytes(32, "big")), (False, b""), (True, b"\x01\x02\x03")]
    assert decode_results(encode(["(bool,bytes)[]"], [results])) == results
    assert decode_results(encode(["(bool,bytes)[]"], [[]])) == []
    (back,) = decode(["(address,bool,bytes)[]"], encode_calls(calls))
    assert [(a.lower(), b, c) for a, b, c in back] == [(a.lower(), b, c) for a, b, c in calls]


def test_a_token_transfer_from_the_payout_wallet_and_a_spend_from_a_deposit_address_are_unknown_outflows(
    setup: Setup,
) -> None:
    setup.mint(PAYOUT_WALLET, 9_000_000)
    customer = address_for(setup.harness, "customer-spent", CHAIN).json["address"]
    setup.send_eth(customer, 10**17)
    setup.watch_until_scanned()
    assert setup.reconcile()["findings"] == []
    custody = setup.runtime.custody.key  # the bare key: no signer's policy
    fees = {"gas": 100_000, "maxFeePerGas": 10**10, "maxPriorityFeePerGas": 10**9, "type": 2}
    transfer = "0xa9059cbb" + "00" * 12 + OUTSIDER[2:].lower() + f"{2_500_000:064x}"
    raw, token_tx = custody.sign_transaction(
        0,
        0,
        {
            "chainId": NETWORK_ID,
            "nonce": 0,
            "to": to_checksum_address(setup.token),
            "value": 0,
            "data": transfer,
            **fees,
        },
    )
    setup.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    # The deposit address's own key (m/44'/60'/1'/0/0): the engine never signs from it yet.
    raw, spend_tx = custody.sign_transaction(
        1, 0, {"chainId": NETWORK_ID, "nonce": 0, "to": OUTSIDER, "value": 4 * 10**16, **fees}
    )
    setup.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    setup.node.mine(2)
    findings = setup.reconcile()["findings"]
    outflows = sorted(
        (f["assetCode"], f["address"], f["actualMinor"], token_tx in f["detail"] or spend_tx in f["detail"])
        for f in findings
        if f["kind"] == "unknown_outflow"
    )
    assert outflows == sorted(
        [("USDC", PAYOUT_WALLET, "2500000", True), ("ETH", customer, str(4 * 10**16), True)]
    )
    assert len(findings) == 2  # compared at the block the watcher scanned: before the spend
    # Once the watcher is past the spend, the deposit address holds less than was deposited to it.
    setup.watch_until_scanned()
    later = [(f["kind"], f["address"], f["expectedMinor"]) for f in setup.reconcile()["findings"]]
    assert ("balance_mismatch", customer, str(10**17)) in later and len(later) == 3


def test_a_node_without_the_scanned_blocks_state_leaves_deposits_uncompared_and_the_rest_reconciled(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appliance.engine.chain.base import ChainError

    customer = address_for(setup.harness, "customer-pruned", CHAIN).json["address"]
    setup.watch_until_scanned()
    setup.send_eth(customer, 31)  # unrecorded: the watcher's cursor is moved past it below
    setup.node.mine(3)
    head = int(setup.node.rpc("eth_blockNumber"), 16)
    with database.connection_context():
        ChainCursor.update(next_block=head - 1).execute()
    full = BulkReader.balances

    def pruned(self: BulkReader, holdings: Any, block: int | None = None) -> list[int]:
        if block is not None and block < head:
            raise ChainError("missing trie node (a full node's pruned state)")
        return full(self, holdings, block)

    monkeypatch.setattr(BulkReader, "balances", pruned)
    setup.node.set_balance(PAYOUT_WALLET, 12)
    assert setup.reconcile()["findings"] == []
    with database.connection_context():  # the rest of the chain was reconciled all the same
        stored = TreasuryBalance.get(
            (TreasuryBalance.role == "payout") & (TreasuryBalance.asset_code == "ETH")
        ).on_chain_minor
    assert stored == "12"
    monkeypatch.setattr(BulkReader, "balances", full)
    assert [f["kind"] for f in setup.reconcile()["findings"]] == ["deposit_not_recorded"]
