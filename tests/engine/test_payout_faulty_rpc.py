"""Payouts through a fault-injecting JSON-RPC proxy in front of anvil (issue 29): a node that lags
a block behind, drops receipts, answers null, loses requests and answers (a time-out as the engine
sees it, also after a transaction was handed on) and answers out of order. Every payout is paid
exactly once."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from appliance.engine.db import database
from appliance.engine.models import Payout
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, harness_settings, make_harness

FAULT_RATE = 0.2
RECEIPT_DROP_RATE = 0.4  # a load-balanced provider whose nodes have not all seen the block
LAGGING_READS = {"eth_getTransactionCount", "eth_getBalance", "eth_getBlockByNumber"}
NULLABLE = {"eth_getTransactionReceipt", "eth_getBlockByNumber", "eth_getTransactionByHash"}


class FaultyProxy:
    """A JSON-RPC proxy: each request meets, with FAULT_RATE, one fault drawn from a seeded
    generator (so a failure can be replayed)."""

    def __init__(self, upstream: str, seed: int) -> None:
        self.upstream = upstream
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.faults: dict[str, int] = {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                answer = proxy.handle(body)
                if answer is None:  # the connection dies: a time-out or a reset as the client sees it
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _fault(self, method: str) -> str | None:
        with self.lock:
            if method == "eth_getTransactionReceipt" and self.random.random() < RECEIPT_DROP_RATE:
                self.faults["dropped_receipt"] = self.faults.get("dropped_receipt", 0) + 1
                return "null"
            if self.random.random() >= FAULT_RATE:
                return None
            choices = ["lost_request", "lost_answer", "reorder"]
            if method in LAGGING_READS:
                choices.append("lag")
            if method in NULLABLE:
                choices += ["null", "null"]
            fault = self.random.choice(choices)
            self.faults[fault] = self.faults.get(fault, 0) + 1
            return fault

    def _forward(self, body: Any) -> Any:
        return requests.post(self.upstream, json=body, timeout=10).json()

    def handle(self, body: Any) -> Any:
        method = body.get("method", "") if isinstance(body, dict) else ""
        fault = self._fault(method)
        if fault == "lost_request":
            return None
        if fault == "reorder":
            time.sleep(self.random.random() * 0.05)  # answered after requests sent later
        if fault == "null":
            return {"jsonrpc": "2.0", "id": body["id"], "result": None}
        if fault == "lag":
            body = self._one_block_behind(body)
        answer = self._forward(body)
        if fault == "lost_answer":
            return None  # forwarded (a raw transaction reached the node), the answer lost
        return answer

    def _one_block_behind(self, body: dict[str, Any]) -> dict[str, Any]:
        head = int(
            self._forward({"jsonrpc": "2.0", "id": 0, "method": "eth_blockNumber", "params": []})["result"],
            16,
        )
        behind = hex(max(0, head - 1))
        params = list(body.get("params", []))
        if body["method"] == "eth_getBlockByNumber" and params and params[0] == "latest":
            params[0] = behind
        elif body["method"] in ("eth_getTransactionCount", "eth_getBalance") and params[-1:] == ["latest"]:
            params[-1] = behind
        return {**body, "params": params}

    def __enter__(self) -> FaultyProxy:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.mark.parametrize("seed", [29, 2029])
def test_payouts_through_a_faulty_node_are_each_paid_exactly_once(
    settings: Settings, node: Anvil, seed: int
) -> None:
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    with FaultyProxy(node.url, seed) as proxy:
        chains = [
            {
                "id": "eth_anvil",
                "rpc_url": proxy.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 4}],
            }
        ]
        harness = make_harness(
            harness_settings(
                settings, {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
            ),
            lambda app: node.mine(),
        )
        ids = [f"pyo_faulty{n:04d}" for n in range(8)]
        dests = [f"0x{0xFA00 + n:040x}" for n in range(8)]
        for payout_id, to in zip(ids, dests, strict=True):
            harness.submit(payout_id, 1000 + len(payout_id) + int(to, 16) % 100, destination=to)

        def all_final() -> bool:
            harness.skip_waits()  # retries after a fault back off; the test does not sleep through them
            with database.connection_context():
                return all(p.status in ("COMPLETED", "FAILED") for p in Payout.select())

        harness.drive(all_final, seconds=120)
        assert sum(proxy.faults.values()) > 10, proxy.faults
    for payout_id, to in zip(ids, dests, strict=True):
        assert harness.payout(payout_id).status == "COMPLETED", harness.payout(payout_id).reason
        assert node.balance(to) == 1000 + len(payout_id) + int(to, 16) % 100
    # Exactly one transaction per payout left the wallet.
    assert int(node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == len(ids)
