"""Restarts take over at once (issue 26, item 5): after kill -9 of `appliance serve` and a restart on
the same data directory, the new process does not wait for the killed one's leases, which name a
process of this host that no longer runs (appliance/common/holders.py).

A real server confirms a first deposit and starts delivering its webhook to a receiver that holds
the request (the delivery's 60 s lease is taken); a second deposit is on the chain, not yet deep
enough, while the server's deposit watcher holds the chain's 30 s lease. kill -9 of the whole
server, then a restart: the held webhook is delivered, and the second deposit confirmed, each
within the issue's 5 s bound (before, 30 s and more), counted from the moment the restarted server
answers (its start-up time, 2-11 s on a loaded machine, owes nothing to leases). The figures are printed.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import BACKEND
from tests.crash.harness import start_server
from tests.engine.tls_receiver import tls_receiver

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        BACKEND != "sqlite", reason="kills a server on the SQLite files of its data directory"
    ),
]

BOUND_SECONDS = 5.0  # the acceptance bound, for the webhook and for the deposit
BLOCK_SECONDS = "0.5"
ETHER = 10**18
# Deep enough only well after the server is killed: it is killed once the deposit is seen pending.
CONFIRMATIONS = 8


def _until(what: str, check, seconds: float = 60.0, pause: float = 0.05):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(pause)
    raise AssertionError(f"{what}: not within {seconds} s")


def test_after_kill_9_a_restart_takes_over_the_leases_of_the_killed_process_at_once(
    settings, tmp_path: Path
) -> None:
    from appliance.engine.app import create_app as create_engine
    from appliance.engine.chain.registry import open_local_chain
    from appliance.engine.client import EngineClient
    from appliance.engine.custody_file import create_custody_key
    from tests.engine.helpers import make_operator

    operator = make_operator(create_engine(settings))
    create_custody_key(settings.data_dir)
    (tmp_path / "tls").mkdir()
    with tls_receiver(tmp_path / "tls") as receiver:
        env = {
            "APPLIANCE_WEBHOOK_ALLOW_PRIVATE": "1",
            "APPLIANCE_WEBHOOK_CA_FILE": str(receiver.ca_file),
            "APPLIANCE_LOCAL_BLOCK_SECONDS": BLOCK_SECONDS,
            "APPLIANCE_LOCAL_CONFIRMATIONS": str(CONFIRMATIONS),
        }
        server = start_server(settings.data_dir, "--processes", "1", env=env)
        try:
            engine = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
            subscribed = engine.request(
                "POST", "/v1/webhooks/subscriptions", json_body={"endpointUrl": receiver.url}
            )
            assert subscribed.status_code == 201, subscribed.text
            addresses = [
                engine.request(
                    "POST", "/v1/deposit-addresses", json_body={"accountRef": account, "chainId": "eth_local"}
                ).json()["address"]
                for account in ("first-1", "second-2")
            ]

            def deposits(account: str) -> list[dict]:
                answer = engine.request("GET", "/v1/deposits", params={"accountRef": account})
                assert answer.status_code == 200, answer.text
                return answer.json()["transfers"]

            # The first delivery is held (the sender's timeout is 10 s): the server is killed meanwhile.
            receiver.answers.append("hang:20")
            chain = open_local_chain(settings)
            try:
                chain.faucet("ETH", addresses[0], ETHER)
                _until("the first webhook's delivery", lambda: receiver.received, seconds=60)
                second_tx, _ = chain.faucet("ETH", addresses[1], ETHER)  # on the chain, not deep enough
            finally:
                chain.close()
            second = _until("the second deposit seen", lambda: deposits("second-2"), seconds=30)
            assert second[0]["status"] == "PENDING", second
        finally:
            server.kill_group()  # mid-delivery, the watcher's lease fresh

        # The moment the second deposit is deep enough, seen on the chain from the restart on
        # (the new server's miner may get there before its HTTP answers).
        deep_enough = int(second[0]["blockHeight"]) + CONFIRMATIONS - 1
        seen: dict[str, float] = {}
        stop = threading.Event()

        def watch_chain() -> None:
            chain = open_local_chain(settings)
            try:
                while not stop.is_set() and "deep" not in seen:
                    if chain.head().number >= deep_enough:
                        seen["deep"] = time.time()
                    time.sleep(0.05)
            finally:
                chain.close()

        def confirmed_at() -> float | None:
            with contextlib.closing(sqlite3.connect(settings.data_dir / "engine.db")) as conn:
                row = conn.execute(
                    "SELECT confirmed_at FROM deposit WHERE tx_hash = ?", (second_tx,)
                ).fetchone()
            return datetime.fromisoformat(row[0]).replace(tzinfo=UTC).timestamp() if row and row[0] else None

        def lease_left(sql: str) -> float:
            with contextlib.closing(sqlite3.connect(settings.data_dir / "engine.db")) as conn:
                (until,) = conn.execute(sql).fetchone()
            return datetime.fromisoformat(until).replace(tzinfo=UTC).timestamp() - time.time()

        # What the killed process still held: the waits a restart had before (not asserted on: on a
        # loaded machine the start-up alone can outlast them).
        watcher_lease = lease_left("SELECT lease_until FROM chain_cursor WHERE chain_id = 'eth_local'")
        delivery_lease = lease_left("SELECT max(lease_until) FROM webhook_delivery")
        chain_watcher = threading.Thread(target=watch_chain, daemon=True)
        restarted, restarted_wall = time.monotonic(), time.time()
        chain_watcher.start()
        server = start_server(settings.data_dir, "--processes", "1", env=env)
        answering, answering_wall = time.monotonic(), time.time()
        try:
            held = receiver.received[0].headers["x-webhook-event-id"]

            def redelivered() -> list:
                return [r for r in receiver.received[1:] if r.headers["x-webhook-event-id"] == held]

            delivered = _until("the held webhook delivered again", redelivered, seconds=90)
            confirmed = _until("the second deposit confirmed", confirmed_at, seconds=90)
            deep = _until("the second deposit deep enough", lambda: seen.get("deep"), seconds=30)
        finally:
            stop.set()
            server.stop()

    webhook_after = delivered[0].at - answering_wall
    deposit_after = confirmed - deep
    print(
        f"\nrestart: the new server answered {answering - restarted:.2f} s after it was started; the held "
        f"webhook was delivered {webhook_after:.2f} s after that ({delivered[0].at - restarted_wall:.2f} s "
        f"after the start); the second deposit was confirmed {deposit_after:.2f} s after reaching its "
        f"{CONFIRMATIONS} confirmations ({confirmed - restarted_wall:.2f} s after the start); the killed "
        f"process's leases had {watcher_lease:.1f} s (deposit watcher) and {delivery_lease:.1f} s (webhook "
        "delivery) left at the start"
    )
    assert webhook_after <= BOUND_SECONDS
    assert deposit_after <= BOUND_SECONDS
