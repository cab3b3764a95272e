"""The chain's JSON-RPC node stopped (SIGSTOP) and killed (SIGKILL, restarted from its saved state)
under load (issue 32): a real `appliance serve` on an anvil chain configured as a [[chains]]
entry, signed payouts streaming into the engine and deposits sent before the fault.

What an operator sees, and what these tests hold the engine to: submissions keep being answered
(201, the payout queued; never a 500) while the node is gone; `/health/ready` fails on
`chain:<id>` (a stopped node within the RPC time-out, a killed one at the next probe) and passes
again by itself once the node is back; every accepted payout is then paid exactly once (one
transaction per payout leaves the wallet) and every deposit is confirmed once.

Each test prints one summary line (answer codes, seconds from fault to health failing and from
recovery to health passing) into the captured output, and names the same figures in its
assertion messages."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from appliance.engine.client import EngineClient
from tests.conftest import free_port
from tests.crash.harness import Server, start_server
from tests.engine.anvil import ANVIL, NETWORK_ID, Anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC

pytestmark = pytest.mark.server

CHAIN = "eth_anvil"
PAYER = "0x00000000000000000000000000000000000b0b00"


class Node:
    """anvil on a fixed port, mining a block a second, saving its state every second to a file it
    is restarted from (what a node's database on disk is to a real client)."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.state = directory / "anvil-state.json"
        self.process: subprocess.Popen | None = None
        self.api = Anvil(f"http://127.0.0.1:{self.port}", None)  # type: ignore[arg-type]

    def start(self) -> None:
        if not ANVIL.exists():
            pytest.skip("anvil is not installed: `make setup` installs it from the npm registry (needs npm)")
        saved = ["--load-state", str(self.state)] if self.state.exists() else []
        self.process = subprocess.Popen(
            [
                str(ANVIL),
                "--port",
                str(self.port),
                "--chain-id",
                str(NETWORK_ID),
                "--block-time",
                "1",
                "--silent",
                "--dump-state",
                str(self.state),
                "--state-interval",
                "1",
                *saved,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.api.process = self.process
        _wait_for(lambda: _answers(self.api), seconds=20)

    def signal(self, signum: int) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signum)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def remove(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)


def _answers(api: Anvil) -> bool:
    try:
        api.rpc("eth_chainId")
        return True
    except (requests.RequestException, ValueError, RuntimeError):
        return False


def _wait_for(check, seconds: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        assert time.monotonic() < deadline, f"{what}: not reached within {seconds} s"
        time.sleep(0.1)


def _chain_check(server: Server) -> str:
    """The `chain:<id>` readiness check, "pass" only when /health/ready answers 200 too."""
    try:
        answer = requests.get(f"{server.engine}/health/ready", timeout=30)
        status = answer.json()["checks"].get(f"chain:{CHAIN}", "missing")
    except (requests.RequestException, ValueError):
        return "no answer"
    return status if answer.status_code == 200 or status != "pass" else "pass-but-not-ready"


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    chain = Node(tmp_path)
    chain.start()
    yield chain
    chain.remove()


@pytest.fixture
def engine(data_dir: Path, node: Node) -> Iterator[tuple[Server, EngineClient]]:
    chains = [
        {
            "id": CHAIN,
            "rpc_url": node.api.url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2}],
        }
    ]
    (data_dir / "appliance.toml").write_text(
        f"local_chain = false\nchains = {json.dumps(json.dumps(chains))}\npayout_worker_seconds = 0.2\n"
    )
    (data_dir / "custody.key").write_text(TEST_MNEMONIC)
    (data_dir / "custody.key").chmod(0o600)
    node.api.set_balance(PAYOUT_WALLET, 10 * ETHER)
    server = start_server(data_dir, "--processes", "2")
    try:
        from appliance.engine.app import create_app
        from appliance.engine.db import database
        from appliance.settings import load_settings
        from tests.engine.helpers import make_operator

        operator = make_operator(create_app(load_settings({"data_dir": str(data_dir)}, environ={})))
        database.close_all()  # a client from here on, through HTTP only
        # One attempt per request: the answer counted is the engine's own, not a retry's.
        client = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
        client.timeout = 30
        _wait_for(lambda: _chain_check(server) == "pass", what="ready before the fault")
        yield server, client
    finally:
        server.stop()
    log = server.log.read_text()
    trace = log.find("Traceback")
    assert trace < 0, log[max(0, trace - 300) : trace + 3000]


class Load:
    """Signed payouts submitted one after another, each to its own destination, with the answer
    codes counted and the accepted ones remembered."""

    def __init__(self, client: EngineClient, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.codes: collections.Counter[int | str] = collections.Counter()
        self.accepted: dict[str, tuple[int, str]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            payout_id = f"pyo_{self.prefix}{n:04d}"
            amount, destination = 1000 + n, "0x" + f"{0xFA0000 + n:040x}"
            body = {
                "payoutId": payout_id,
                "asset": "ETH",
                "amountMinor": str(amount),
                "destination": destination,
            }
            try:
                answer = self.client.request("POST", "/v1/payouts", json_body=body, idempotency_key=payout_id)
            except Exception as exc:  # no answer at all: counted, never a silent pass
                self.codes[type(exc).__name__] += 1
                continue
            self.codes[answer.status_code] += 1
            if answer.status_code == 201:
                self.accepted[payout_id] = (amount, destination)
            time.sleep(0.15)

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=60)


def _deposits(client: EngineClient, node: Node, account: str, count: int) -> dict[str, int]:
    """``count`` deposits to the account's address, sent from an impersonated payer; tx hash -> wei."""
    answer = client.request(
        "POST", "/v1/deposit-addresses", json_body={"accountRef": account, "chainId": CHAIN}
    )
    assert answer.status_code in (200, 201), answer.text
    address = answer.json()["address"]
    node.api.set_balance(PAYER, ETHER)
    node.api.rpc("anvil_impersonateAccount", PAYER)
    sent = {}
    for n in range(count):
        value = 7000 + n
        sent[node.api.rpc("eth_sendTransaction", {"from": PAYER, "to": address, "value": hex(value)})] = value
    return sent


def _settled(client: EngineClient, node: Node, load: Load, account: str, sent: dict[str, int]) -> None:
    """Every accepted payout COMPLETED and paid once on chain; every deposit CONFIRMED once."""

    def payouts_done() -> bool:
        for payout_id in load.accepted:
            answer = client.request("GET", f"/v1/payouts/{payout_id}")
            if answer.status_code != 200 or answer.json()["status"] != "COMPLETED":
                return False
        return True

    _wait_for(payouts_done, seconds=60, what="every accepted payout completed")
    for amount, destination in load.accepted.values():
        assert node.api.balance(destination) == amount, destination
    # Exactly one transaction per payout left the wallet: nothing signed and sent twice.
    assert int(node.api.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == len(load.accepted)

    def deposits_confirmed() -> list[dict[str, Any]] | None:
        answer = client.request("GET", "/v1/deposits", params={"accountRef": account})
        transfers = answer.json().get("transfers", []) if answer.status_code == 200 else []
        done = len(transfers) == len(sent) and all(t["status"] == "CONFIRMED" for t in transfers)
        return transfers if done else None

    transfers = _wait_for(deposits_confirmed, seconds=60, what="every deposit confirmed")
    assert {t["txHash"]: int(t["amountMinor"]) for t in transfers} == sent


def _reason(client: EngineClient, payout_id: str) -> str | None:
    detail = client.request("GET", f"/v1/payouts/{payout_id}").json()
    assert detail["status"] == "REQUESTED", detail  # nothing moves while the node is gone
    return detail["reason"]


def test_a_stopped_rpc_node_queues_payouts_fails_readiness_and_everything_is_paid_once_after(
    node: Node, engine: tuple[Server, EngineClient]
) -> None:
    server, client = engine
    with Load(client, "stopped") as load:
        sent = _deposits(client, node, "customer-stop", 3)
        _wait_for(lambda: len(load.accepted) >= 10, what="payouts accepted before the fault")
        node.signal(signal.SIGSTOP)
        stopped = time.monotonic()
        _wait_for(lambda: _chain_check(server) == "fail", what="readiness failing on the stopped node")
        to_fail = time.monotonic() - stopped
        during = len(load.accepted)
        _wait_for(lambda: len(load.accepted) >= during + 10, what="payouts accepted while stopped")
        node.signal(signal.SIGCONT)
        resumed = time.monotonic()
        _wait_for(lambda: _chain_check(server) == "pass", what="readiness passing again")
        to_pass = time.monotonic() - resumed
    figures = (
        f"codes {dict(load.codes)}, health failed {to_fail:.1f} s after SIGSTOP, "
        f"passed {to_pass:.1f} s after SIGCONT"
    )
    print(f"\nRPC node SIGSTOP: {figures}, {len(load.accepted)} payouts accepted")
    assert set(load.codes) == {201}, figures  # accepted and queued, never a 500 or no answer
    _settled(client, node, load, "customer-stop", sent)


def test_a_killed_rpc_node_restarted_from_its_state_leaves_payouts_waiting_then_pays_each_once(
    node: Node, engine: tuple[Server, EngineClient]
) -> None:
    server, client = engine
    with Load(client, "killed") as load:
        sent = _deposits(client, node, "customer-kill", 3)
        _wait_for(lambda: len(load.accepted) >= 10, what="payouts accepted before the fault")
        time.sleep(1.5)  # the deposits' blocks saved by the node's state interval, as a node's disk
        head = int(node.api.rpc("eth_blockNumber"), 16)
        node.kill()
        killed = time.monotonic()
        _wait_for(lambda: _chain_check(server) == "fail", what="readiness failing on the killed node")
        to_fail = time.monotonic() - killed
        during = len(load.accepted)
        _wait_for(lambda: len(load.accepted) >= during + 10, what="payouts accepted while the node is gone")
        # A payout accepted meanwhile waits, and its detail says why (the URL is not shown).
        late = list(load.accepted)[-1]
        waiting = _wait_for(lambda: _reason(client, late), what="a waiting payout's reason")
        assert waiting == f"waiting for chain {CHAIN}: its node does not answer; retried by itself"
        node.start()
        lost = max(0, head - int(node.api.rpc("eth_blockNumber"), 16))
        restarted = time.monotonic()
        _wait_for(lambda: _chain_check(server) == "pass", what="readiness passing again")
        to_pass = time.monotonic() - restarted
    figures = (
        f"codes {dict(load.codes)}, health failed {to_fail:.1f} s after SIGKILL, "
        f"passed {to_pass:.1f} s after the restart, {lost} blocks lost with the node"
    )
    print(f"\nRPC node SIGKILL: {figures}, {len(load.accepted)} payouts accepted, waiting: {waiting!r}")
    assert set(load.codes) == {201}, figures
    _settled(client, node, load, "customer-kill", sent)
