"""Reconciliation through a provider whose nodes lag (issue 44, item 9): the head and the nonces
come from a node at the chain's head, receipts and blocks from one some blocks behind, as behind
a load balancer. A payout mined there is not an unknown outflow; one raised while the lag was
longer than the chain's confirmations resolves itself, recorded, once the chain shows the
engine's own transaction; a foreign transaction at the engine's nonce stays an unknown outflow."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.db import database
from appliance.engine.models import TreasuryFinding
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC
from tests.engine.test_treasury_anvil import OUTSIDER, Setup, make_setup

# What a node behind the head cannot answer yet: anything about a block it has not seen.
BY_BLOCK = {"eth_getTransactionReceipt", "eth_getTransactionByHash"}


class LaggingProxy:
    """A JSON-RPC proxy in front of anvil whose receipts, transactions and numbered blocks come
    from a node ``lag`` blocks behind; the head and every state read come from the head."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.lag = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = [proxy.handle(b) for b in body] if isinstance(body, list) else proxy.handle(body)
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _forward(self, body: Any) -> Any:
        return requests.post(self.upstream, json=body, timeout=10).json()

    def handle(self, body: dict[str, Any]) -> Any:
        answer = self._forward(body)
        if not self.lag or not isinstance(answer.get("result"), dict):
            return answer
        method, result = body["method"], answer["result"]
        unseen = body["method"] in BY_BLOCK or (
            method == "eth_getBlockByNumber" and body["params"][0] not in ("latest", "pending")
        )
        number = result.get("blockNumber") if method in BY_BLOCK else result.get("number")
        if unseen and number is not None and int(number, 16) > self._head() - self.lag:
            return {**answer, "result": None}
        return answer

    def _head(self) -> int:
        reply = self._forward({"jsonrpc": "2.0", "id": 0, "method": "eth_blockNumber", "params": []})
        return int(reply["result"], 16)

    def __enter__(self) -> LaggingProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


class Upstream:
    """The anvil node as make_setup sees it, with the proxy's address as the chain's rpc_url."""

    def __init__(self, node: Anvil, url: str) -> None:
        self.node, self.url = node, url

    def __getattr__(self, name: str) -> Any:
        return getattr(self.node, name)


@pytest.fixture
def lagging(settings: Settings) -> Iterator[tuple[Setup, LaggingProxy]]:
    with running_anvil(free_port()) as node, LaggingProxy(node.url) as proxy:
        setup = make_setup(settings, Upstream(node, proxy.url), multicall=True)  # type: ignore[arg-type]
        yield setup, proxy


def broadcast_unmined(setup: Setup, payout_id: str) -> str:
    """A payout sent and not mined yet: the engine's reservation is 'sent'. Its hash."""
    setup.node.rpc("evm_setAutomine", False)
    setup.harness.submit(payout_id, 4_321)
    setup.harness.until_status(payout_id, "BROADCAST", mine=False)
    return str(setup.harness.payout(payout_id).tx_hash)


def open_findings(setup: Setup) -> list[tuple[str, str]]:
    return [(f["kind"], f["address"]) for f in setup.reconcile()["findings"]]


def test_a_payout_mined_with_its_receipt_missing_on_a_node_two_blocks_behind_is_no_unknown_outflow(
    lagging: tuple[Setup, LaggingProxy],
) -> None:
    setup, proxy = lagging
    tx_hash = broadcast_unmined(setup, "pyo_lagging01")
    proxy.lag = 2
    setup.node.mine(2)  # mined, in a block the receipts' node has not seen
    assert setup.node.rpc("eth_getTransactionReceipt", tx_hash)["status"] == "0x1"
    assert (
        requests.post(
            proxy.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "eth_getTransactionReceipt", "params": [tx_hash]},
        ).json()["result"]
        is None
    )
    assert open_findings(setup) == []
    assert setup.ready_treasury()[1] == "pass"
    proxy.lag = 0
    assert open_findings(setup) == []


def test_an_unknown_outflow_raised_while_the_node_lagged_clears_itself_recorded_and_ready_passes(
    lagging: tuple[Setup, LaggingProxy], settings: Settings
) -> None:
    setup, proxy = lagging
    tx_hash = broadcast_unmined(setup, "pyo_lagging02")
    proxy.lag = 6  # further behind than the chain's confirmations (2): the nonce looks taken
    setup.node.mine(4)
    assert open_findings(setup) == [("unknown_outflow", PAYOUT_WALLET)]
    assert setup.ready_treasury() == (503, "fail")
    proxy.lag = 0  # the node caught up
    assert open_findings(setup) == []
    assert setup.ready_treasury()[1] == "pass"
    with database.connection_context():
        row = TreasuryFinding.get(TreasuryFinding.kind == "unknown_outflow")
    # Kept, not deleted: resolved by the reconciler with the reason, no administrator involved.
    assert row.acknowledged_at is None and row.resolved_at is not None
    assert tx_hash in row.resolution and "the engine's own payout transaction" in row.resolution
    shown = CliRunner().invoke(
        cli,
        ["reconcile", "--data-dir", str(settings.data_dir)],
        env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **setup.environ},
        catch_exceptions=False,
    )
    assert shown.exit_code == 0, shown.output
    assert "0 finding(s)" in shown.output and "1 finding(s) resolved by reconcile" in shown.output
    assert f"unknown_outflow eth_anvil {PAYOUT_WALLET}: {row.resolution}" in shown.output
    setup.harness.until_status("pyo_lagging02", "COMPLETED", mine=False)
    setup.node.mine(3)
    assert open_findings(setup) == []


def test_a_foreign_transaction_at_the_engines_nonce_is_still_an_unknown_outflow_that_does_not_clear(
    lagging: tuple[Setup, LaggingProxy],
) -> None:
    setup, proxy = lagging
    ours = broadcast_unmined(setup, "pyo_lagging03")
    nonce = int(setup.node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16)
    setup.node.rpc("anvil_dropTransaction", ours)
    # Another signer with the same key takes the engine's nonce, straight to the node.
    raw, foreign = setup.runtime.custody.key.sign_transaction(
        0,
        0,
        {
            "chainId": NETWORK_ID,
            "nonce": nonce,
            "to": OUTSIDER,
            "value": 2 * ETHER,
            "gas": 21_000,
            "maxFeePerGas": 10**11,
            "maxPriorityFeePerGas": 10**10,
            "type": 2,
        },
    )
    setup.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    proxy.lag = 2
    setup.node.mine(1)
    assert open_findings(setup) == []  # used within the confirmations, not visible yet: wait
    setup.node.mine(3)
    proxy.lag = 0
    for _ in range(2):
        findings = setup.reconcile()["findings"]
        assert [(f["kind"], f["actualMinor"]) for f in findings] == [("unknown_outflow", str(2 * ETHER))]
        assert foreign in findings[0]["detail"] and f"nonce {nonce}" in findings[0]["detail"]
        assert setup.ready_treasury() == (503, "fail")
        setup.node.mine(2)
    with database.connection_context():
        assert TreasuryFinding.get(TreasuryFinding.kind == "unknown_outflow").resolved_at is None
