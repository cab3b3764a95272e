"""Scale-out, for real (issue 18): two appliance nodes A and B (separate processes, data directories
and ports) on one PostgreSQL, one S3-compatible store, one Redis and one Ethereum node.

What one node writes, the other reads and streams; background work (mail, payouts, deposits,
webhooks, report projection, exports) is done once across both by their leases; public rate limits
count once across both in Redis; an object uploaded through one is read through the other; links,
sessions and signatures are good (and used up) on both. Both nodes start at the same moment on
empty databases, so they also migrate side by side. Last, A is killed and B carries on alone.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import os
import queue
import secrets
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg2
import pytest
import requests

from appliance.engine.client import EngineClient
from tests.conftest import _admin, _database_url, free_port, postgres_url
from tests.dispatch.factory import Member
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC
from tests.engine.tls_receiver import Receiver, tls_receiver
from tests.nodes.harness import Node, launch, running_redis, running_s3, until, wait_ready, write_settings

pytestmark = pytest.mark.server

BUCKET = "nodes"
PUBLIC_LIMIT = 6  # per hour: the window starts at the first request, so no boundary falls inside
JPEG = b"\xff\xd8\xff\xe0" + secrets.token_bytes(4096)


@dataclasses.dataclass
class Cluster:
    a: Node
    b: Node
    redis_url: str
    chain: Anvil
    receiver: Receiver
    dispatch_url: str
    engine_url: str
    owner: Member
    dispatcher: Member
    courier: Member
    operator: dict[str, str]
    signer: EngineClient | None = None

    def engine_client(self, node: Node) -> EngineClient:
        """The operator's one client, pointed at ``node``: one client, so that two requests in the
        same second never carry the same signature (the nodes share the replay record)."""
        if self.signer is None:
            self.signer = EngineClient(node.engine, self.operator["operatorId"], self.operator["secret"])
        self.signer.base_url = node.engine
        return self.signer

    def query(self, url: str, sql: str, *params: Any) -> list[tuple]:
        connection = psycopg2.connect(url)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
        finally:
            connection.close()


def _chains(chain: Anvil) -> str:
    return json.dumps(
        [
            {
                "id": "eth_anvil",
                "rpc_url": chain.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2}],
            }
        ]
    )


def _provision(data_dir: Path) -> tuple[Member, Member, Member, dict[str, str]]:
    """The company (owner, dispatcher, courier) and the engine operator, written straight into the
    shared databases by apps built in this process on node A's settings (the same key as the nodes)."""
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine
    from appliance.settings import load_settings
    from tests.dispatch.factory import make_company, make_member
    from tests.engine.helpers import make_operator

    settings = load_settings({"data_dir": str(data_dir)}, environ={})
    dispatch = create_dispatch(settings)
    with dispatch.app_context():
        company = make_company("Arev Nodes")
        owner, dispatcher, courier = (
            make_member(dispatch, company, role) for role in ("owner", "dispatcher", "courier")
        )
        # The owner's address is proven, as after a real sign-up: the sign-in link test below
        # would otherwise be the address's first proof, which ends the owner's older sessions.
        owner.user.email_confirmed = True
        owner.user.save()
    operator = make_operator(create_engine(settings), "op_nodes0001")
    from appliance.dispatch.db import database as dispatch_database
    from appliance.engine.db import database as engine_database

    dispatch_database.close_all()  # this process is a client from here on, through HTTP only
    engine_database.close_all()
    return owner, dispatcher, courier, operator


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set: `make test-nodes` starts a PostgreSQL server")
    root = tmp_path_factory.mktemp("nodes")
    suffix = f"{os.getpid()}"
    databases = {service: f"nodes_{service}_{suffix}" for service in ("dispatch", "engine")}
    for name in databases.values():
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        _admin(f"CREATE DATABASE {name}")
    urls = {service: _database_url(name) for service, name in databases.items()}
    nodes: list[Node] = []
    with contextlib.ExitStack() as stack:
        stack.callback(
            lambda: [_admin(f"DROP DATABASE IF EXISTS {n} WITH (FORCE)") for n in databases.values()]
        )
        redis_url = stack.enter_context(running_redis(root / "redis"))
        s3_endpoint = stack.enter_context(running_s3(BUCKET))
        chain = stack.enter_context(running_anvil(free_port(), "--block-time", "1"))
        chain.set_balance(PAYOUT_WALLET, 10 * ETHER)
        (root / "tls").mkdir()
        receiver = stack.enter_context(tls_receiver(root / "tls"))

        # What every node shares: the same settings file and the same keys (appliance.key signs the
        # tokens and encrypts operator secrets; custody.key holds the wallets).
        from appliance.common.keys import load_or_create_master_key

        shared = {
            "dispatch_database": urls["dispatch"],
            "engine_database": urls["engine"],
            "s3_endpoint": s3_endpoint,
            "s3_bucket": BUCKET,
            "s3_access_key": "test",
            "s3_secret_key": "testsecret",
            "rate_limit_storage": redis_url,
            "rate_limit_public": f"{PUBLIC_LIMIT} per hour",
            "routing_engine": "none",
            "local_chain": False,
            "chains": _chains(chain),
            "webhook_allow_private": True,
            "webhook_ca_file": str(receiver.ca_file),
            "payout_worker_seconds": 0.2,
            "event_stream_seconds": 60,
            "shutdown_grace_seconds": 2.0,
        }
        directories = {name: root / name for name in ("a", "b")}
        for directory in directories.values():
            directory.mkdir()
            write_settings(directory, shared)
            (directory / "custody.key").write_text(TEST_MNEMONIC)
            (directory / "custody.key").chmod(0o600)
        load_or_create_master_key(directories["a"])
        shutil.copy2(directories["a"] / "appliance.key", directories["b"] / "appliance.key")

        for name, directory in directories.items():  # both at once, on empty databases
            node = launch(name, directory, {})
            nodes.append(node)
            stack.callback(node.server.stop)
        wait_ready(nodes)
        owner, dispatcher, courier, operator = _provision(directories["a"])
        signer = EngineClient(nodes[0].engine, operator["operatorId"], operator["secret"])
        subscribed = signer.request(
            "POST", "/v1/webhooks/subscriptions", json_body={"endpointUrl": receiver.url}
        )
        assert subscribed.status_code == 201, subscribed.text
        yield Cluster(
            nodes[0],
            nodes[1],
            redis_url,
            chain,
            receiver,
            urls["dispatch"],
            urls["engine"],
            owner,
            dispatcher,
            courier,
            operator,
            signer,
        )
        for node in nodes:
            assert "Traceback" not in node.log(), f"node {node.name} logged an error:\n{node.log()[-4000:]}"


def _post(node: Node, path: str, member: Member, body: Any = None) -> requests.Response:
    return requests.post(f"{node.dispatch}{path}", json=body, headers=member.headers, timeout=30)


def _get(node: Node, path: str, member: Member) -> requests.Response:
    return requests.get(f"{node.dispatch}{path}", headers=member.headers, timeout=30)


def _order_for_the_courier(cluster: Cluster, node: Node) -> dict[str, Any]:
    order = {
        "recipientName": "Gayane Petrosyan",
        "recipientPhone": "+37491123456",
        "amountAmd": 5000,
        "addressLabelHy": "Աբովյան 10",
        "pin": {"lat": 40.1812, "lon": 44.5140},
    }
    created = _post(node, "/orders", cluster.dispatcher, order)
    assert created.status_code == 201, created.text
    order_id = created.json()["order"]["id"]
    ready = _post(node, f"/orders/{order_id}/status", cluster.dispatcher, {"status": "ready"})
    assert ready.status_code == 200, ready.text
    assigned = _post(
        node, f"/orders/{order_id}/assign", cluster.dispatcher, {"courierId": cluster.courier.courier.id}
    )
    assert assigned.status_code == 201, assigned.text
    return assigned.json()["order"]


def _stream(
    node: Node, member: Member, heard: queue.Queue[tuple[str, dict]], opened: threading.Event
) -> None:
    """Read B's event stream into ``heard`` as (kind, payload) pairs."""
    with contextlib.suppress(requests.RequestException):
        cursor = _get(node, "/events/latest-cursor", member).json()["cursor"]
        url = f"{node.dispatch}/events?cursor={cursor}"
        with requests.get(url, headers=member.headers, stream=True, timeout=90) as response:
            kind = ""
            for line in response.iter_lines(decode_unicode=True):
                opened.set()
                if line.startswith("event: "):
                    kind = line[len("event: ") :]
                elif line.startswith("data: "):
                    heard.put((kind, json.loads(line[len("data: ") :])["payload"]))


def test_both_nodes_are_ready_on_the_shared_databases_key_and_bucket(cluster: Cluster) -> None:
    for node in (cluster.a, cluster.b):
        ready = requests.get(f"{node.engine}/health/ready", timeout=30)
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"] == {
            "database": "pass",
            "disk": "pass",
            "keys": "pass",
            "custody": "pass",
            "chain:eth_anvil": "pass",
            "payouts:fencing": "pass",
            "treasury": "pass",
        }
        # Dispatch answers 503 here only because these nodes have no roads or tiles built.
        checks = requests.get(f"{node.dispatch}/healthz", timeout=30).json()["checks"]
        assert checks["database"]["status"] == "pass" and checks["objects"]["status"] == "pass"
        assert checks["objects"]["bucket"] == BUCKET


def test_a_gps_batch_sent_to_a_is_in_bs_listing_and_on_a_stream_open_on_b(cluster: Cluster) -> None:
    a, b = cluster.a, cluster.b
    heard: queue.Queue[tuple[str, dict]] = queue.Queue()
    opened = threading.Event()
    threading.Thread(target=_stream, args=(b, cluster.dispatcher, heard, opened), daemon=True).start()
    assert opened.wait(30), "the stream on B did not open"

    started = _post(a, "/courier/shift/start", cluster.courier)
    assert started.status_code == 201, started.text
    newest = datetime.now(UTC).replace(microsecond=0)
    points = [
        {
            "lat": 40.18 + i / 1000,
            "lon": 44.51,
            "capturedAt": (newest - timedelta(seconds=10 * (4 - i))).isoformat(),
        }
        for i in range(5)
    ]
    sent = _post(a, "/courier/location", cluster.courier, {"points": points})
    assert sent.status_code == 202 and sent.json()["accepted"] == 5, sent.text

    courier_id = str(cluster.courier.courier.id)
    while True:  # the shift's own events come first
        kind, payload = heard.get(timeout=30)
        if kind == "courier.location":
            break
    assert payload["courierId"] == courier_id and payload["lat"] == pytest.approx(40.184)

    couriers = _get(b, "/couriers", cluster.dispatcher).json()["couriers"]
    mine = next(c for c in couriers if c["id"] == courier_id)
    assert mine["online"] is True and mine["shift"]["status"] == "active"
    assert mine["location"]["lat"] == pytest.approx(40.184)
    assert datetime.fromisoformat(mine["location"]["capturedAt"].replace("Z", "+00:00")) == newest

    # A listing B keeps in memory follows a change made through A.
    order = _order_for_the_courier(cluster, a)
    listed = {o["id"]: o["status"] for o in _get(b, "/orders", cluster.dispatcher).json()["orders"]}
    assert listed[order["id"]] == "assigned"
    moved = _post(a, f"/courier/orders/{order['id']}/status", cluster.courier, {"status": "picked_up"})
    assert moved.status_code == 200, moved.text
    listed = {o["id"]: o["status"] for o in _get(b, "/orders", cluster.dispatcher).json()["orders"]}
    assert listed[order["id"]] == "picked_up"


def test_mail_queued_through_both_nodes_is_written_exactly_once(cluster: Cluster) -> None:
    """An invite sent through each node, and twenty messages queued straight into the shared
    table for the two nodes' mail workers to race over: one .eml per message across both outboxes."""
    for node, n in ((cluster.a, 1), (cluster.b, 2)):
        invited = _post(
            node,
            "/company/invites",
            cluster.owner,
            {"role": "courier", "name": f"Courier {n}", "email": f"invited{n}@example.am"},
        )
        assert invited.status_code == 201 and invited.json()["emailed"] is True, invited.text
    now = datetime.now(UTC).replace(tzinfo=None)
    connection = psycopg2.connect(cluster.dispatch_url)
    with connection, connection.cursor() as cursor:
        for n in range(20):
            cursor.execute(
                "INSERT INTO outgoing_mail (to_address, subject, body, status, attempts,"
                " next_attempt_at, created_at) VALUES (%s, %s, %s, 'queued', 0, %s, %s)",
                (f"queued{n}@example.am", f"Queued {n}", "body", now, now),
            )
    connection.close()

    def all_sent() -> bool:
        return (
            cluster.query(cluster.dispatch_url, "SELECT count(*) FROM outgoing_mail WHERE status <> 'sent'")[
                0
            ][0]
            == 0
        )

    until("every queued message sent", all_sent, seconds=60)
    rows = cluster.query(
        cluster.dispatch_url, "SELECT id, to_address, attempts FROM outgoing_mail ORDER BY id"
    )
    assert len(rows) == 22 and all(attempts == 1 for _, _, attempts in rows)
    files = cluster.a.outbox() + cluster.b.outbox()
    written = sorted(int(path.stem.rsplit("-", 1)[1]) for path in files)
    assert written == [row_id for row_id, _, _ in rows]  # each message once, none twice
    recipients = sorted(
        next(line for line in path.read_text().splitlines() if line.startswith("To: "))[4:] for path in files
    )
    assert recipients == sorted(to for _, to, _ in rows)


def test_a_sign_in_link_mailed_by_a_signs_in_on_b_once_and_its_session_works_on_both(
    cluster: Cluster,
) -> None:
    from tests.dispatch.mail import mail_text

    email = cluster.owner.user.email
    before = set(cluster.a.outbox() + cluster.b.outbox())
    asked = requests.post(f"{cluster.a.dispatch}/auth/magic-link", json={"email": email}, timeout=10)
    assert asked.status_code == 202, asked.text

    def mailed() -> list[Path]:
        return [p for p in cluster.a.outbox() + cluster.b.outbox() if p not in before]

    [message] = until("the sign-in link mailed", mailed, seconds=30)
    token = mail_text(message).split("/login?token=")[1].split()[0]
    session = requests.post(f"{cluster.b.dispatch}/auth/magic-link/verify", json={"token": token}, timeout=10)
    assert session.status_code == 200, session.text
    again = requests.post(f"{cluster.a.dispatch}/auth/magic-link/verify", json={"token": token}, timeout=10)
    assert again.status_code == 401  # used on B: used everywhere
    bearer = {"Authorization": f"Bearer {session.json()['accessToken']}"}
    for node in (cluster.a, cluster.b):  # a token B issued is good on A (the same appliance.key)
        assert requests.get(f"{node.dispatch}/me", headers=bearer, timeout=10).status_code == 200


def test_payouts_sent_to_both_nodes_are_paid_once_with_consecutive_nonces_and_announced_once(
    cluster: Cluster,
) -> None:
    """Six payouts, sent alternately to B and A, for both nodes' payout workers to race over one
    wallet: each paid exactly once, the wallet's nonces 0..5 with no gap and no double, and each
    payout.completed webhook delivered once; then the report counts them once, and an export made
    on A completes once and downloads from B."""
    a, b = cluster.a, cluster.b
    payouts = {f"pyo_twonodes{n:04d}": (12345 + n, "0x" + f"{0xD1E0 + n:040x}") for n in range(6)}
    for n, (payout_id, (amount, destination)) in enumerate(payouts.items()):
        node, other = ((b, a), (a, b))[n % 2]
        key = f"nodes-{payout_id}"
        accepted = cluster.engine_client(node).submit_payout(
            payout_id, "ETH", str(amount), destination, idempotency_key=key
        )
        assert accepted["outcome"] == "ACCEPTED", accepted
        # The client's retry lands on the other node: the same payout, not a second one.
        again = cluster.engine_client(other).submit_payout(
            payout_id, "ETH", str(amount), destination, idempotency_key=key
        )
        assert (again["outcome"], again["payoutId"]) == ("REPLAYED", payout_id), again

    def all_completed() -> list[dict] | None:
        details = [cluster.engine_client(a).get_payout(payout_id) for payout_id in payouts]
        return details if all(d["status"] == "COMPLETED" for d in details) else None

    details = until("every payout completed", all_completed, seconds=90, pause=0.5)
    for (amount, destination), detail in zip(payouts.values(), details, strict=True):
        assert cluster.chain.balance(destination) == amount
        assert [t["to"] for t in detail["transitions"]] == ["REQUESTED", "SIGNED", "BROADCAST", "COMPLETED"]
        assert [attempt["outcome"] for attempt in detail["attempts"]] == ["SENT"]
    assert sorted(int(d["broadcast"]["nonce"]) for d in details) == list(range(6))
    assert int(cluster.chain.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == 6

    until("the webhooks delivered", lambda: _delivered(cluster, "payout.completed") == 6, seconds=60)
    completions = _received(cluster, "payout.completed")
    assert sorted(c["data"]["payoutId"] for c in completions) == sorted(payouts)  # each once
    total = sum(amount for amount, _ in payouts.values())

    def projected() -> list | None:
        body = cluster.engine_client(b).request(
            "GET", "/v1/reports", params={"type": "PAYOUTS", "asset": "ETH"}
        )
        rows = body.json()["rows"]
        return rows if rows else None

    def all_projected() -> list | None:
        rows = projected()
        return rows if rows and rows[0]["count"] == "6" else None

    rows = until("the payouts in the PAYOUTS report", all_projected, seconds=60, pause=0.5)
    assert [(r["count"], r["totalAmountMinor"]) for r in rows] == [("6", str(total))]  # projected once

    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    job = {
        "jobId": "nodes-export-1",
        "reportType": "PAYOUTS",
        "assetCode": "ETH",
        "fromTime": (today - timedelta(days=1)).isoformat(),
        "toTime": (today + timedelta(days=1)).isoformat(),
    }
    created = cluster.engine_client(a).request("POST", "/v1/exports", json_body=job)
    assert created.status_code == 202, created.text

    def complete() -> dict | None:
        body = cluster.engine_client(b).get_export("nodes-export-1")
        return body if body["status"] == "COMPLETE" else None

    until("the export complete", complete, seconds=60, pause=0.5)
    text = b"".join(cluster.engine_client(b).download_export("nodes-export-1")).decode()
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == ["period", "asset", "count", "total_amount_minor", "total_fee_minor", "as_of"]
    assert [(line[1], line[2], line[3]) for line in lines[1:]] == [("ETH", "6", str(total))]
    assert cluster.query(cluster.engine_url, "SELECT attempts, status FROM export_job") == [(0, "COMPLETE")]


RACE_AMOUNT = 10**16  # 0.01 ETH; a payout's gas is a few 10^13 wei
RACE_FIRST, RACE_STEP = 10, 5  # the wallet affords 10 payouts, then 5 more at a time


def test_fifty_payouts_sent_to_both_nodes_at_once_never_sign_more_than_the_wallet_holds(
    cluster: Cluster,
) -> None:
    """Issue 29 item 2 across two real nodes: 50 payouts submitted at once, alternately to A and B,
    both nodes' payout workers preparing them from one wallet that never holds enough for all.
    The wallet is funded in steps (10 payouts' worth and a half, then 5 more at a time), so that
    the nodes race over the last affordable payout nine times: each time exactly the affordable
    ones are signed and paid, no nonce is used twice, nothing is refused for funds or FAILED (a
    payout signed beyond the balance would stay SIGNED holding its nonce and wedge the rest)."""
    a, b = cluster.a, cluster.b
    engine = cluster.engine_url
    start_nonce = int(cluster.chain.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16)
    funded = RACE_FIRST * RACE_AMOUNT + RACE_AMOUNT // 2
    cluster.chain.set_balance(PAYOUT_WALLET, funded)
    payouts = {f"pyo_race{n:04d}": "0x" + f"{0xCA00 + n:040x}" for n in range(50)}
    clients = {
        node.name: EngineClient(node.engine, cluster.operator["operatorId"], cluster.operator["secret"])
        for node in (a, b)
    }
    failures: queue.Queue = queue.Queue()

    def submit(node: Node, ids: list[str]) -> None:
        for payout_id in ids:
            try:
                answer = clients[node.name].submit_payout(
                    payout_id,
                    "ETH",
                    str(RACE_AMOUNT),
                    payouts[payout_id],
                    idempotency_key=f"race-{payout_id}",
                )
                if answer.get("outcome") != "ACCEPTED":
                    failures.put(answer)
            except Exception as exc:  # reported below, on the test's thread
                failures.put(exc)

    ids = list(payouts)
    threads = [threading.Thread(target=submit, args=(node, ids[n::2])) for n, node in enumerate((a, b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures.empty(), failures.get()

    def by_status() -> dict[str, int]:
        rows = cluster.query(
            engine, "SELECT status, count(*) FROM payout WHERE payout_id LIKE 'pyo_race%%' GROUP BY status"
        )
        return {status: int(count) for status, count in rows if int(count)}

    affordable = RACE_FIRST
    while True:
        expected = (
            {"COMPLETED": affordable, "REQUESTED": 50 - affordable} if affordable < 50 else {"COMPLETED": 50}
        )

        def settled(expected: dict[str, int] = expected) -> dict[str, int] | None:
            counts = by_status()
            return counts if counts == expected else None

        until(f"{affordable} payouts paid, the others waiting", settled, seconds=40, pause=0.3)
        signed = cluster.query(
            engine,
            "SELECT p.amount_minor, b.nonce, b.gas_limit, b.max_fee_per_gas FROM broadcast b "
            "JOIN payout p ON p.id = b.payout_id WHERE p.payout_id LIKE 'pyo_race%%'",
        )
        # Never more signed than the wallet was given: amounts and the most their gas could cost.
        assert sum(int(amount) + int(gas) * int(fee) for amount, _n, gas, fee in signed) <= funded
        assert sorted(int(nonce) for _a, nonce, _g, _f in signed) == list(
            range(start_nonce, start_nonce + affordable)
        )
        if affordable == 50:
            break
        step = RACE_STEP * RACE_AMOUNT
        funded += step
        cluster.chain.set_balance(PAYOUT_WALLET, cluster.chain.balance(PAYOUT_WALLET) + step)
        affordable += RACE_STEP

    refused = cluster.query(
        engine,
        "SELECT count(*) FROM payout_attempt t JOIN payout p ON p.id = t.payout_id "
        "WHERE p.payout_id LIKE 'pyo_race%%' AND t.outcome IN ('REJECTED_FUNDS', 'REJECTED_NONCE_USED')",
    )
    assert refused == [(0,)]
    # Both nodes' workers had these payouts in hand (each logged some waiting for funds).
    for node in (a, b):
        assert "pyo_race" in node.log(), f"node {node.name} never stepped a racing payout"
    for destination in payouts.values():
        assert cluster.chain.balance(destination) == RACE_AMOUNT
    assert int(cluster.chain.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == start_nonce + 50


def _delivered(cluster: Cluster, event_type: str) -> int:
    """Deliveries of ``event_type`` done, or -1 while one is still queued."""
    rows = cluster.query(
        cluster.engine_url,
        "SELECT d.status FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id"
        " WHERE e.event_type = %s",
        event_type,
    )
    return len(rows) if all(status == "delivered" for (status,) in rows) else -1


def _received(cluster: Cluster, event_type: str) -> list[dict]:
    bodies = [json.loads(r.body) for r in cluster.receiver.received]
    return [body for body in bodies if body["type"] == event_type]


def test_a_deposit_is_recorded_once_and_announced_once_whichever_node_watches(cluster: Cluster) -> None:
    """Each node runs a deposit watcher for the chain; one holds its lease at a time."""
    a, b = cluster.a, cluster.b
    body = {"accountRef": "customer-nodes", "chainId": "eth_anvil"}
    first = cluster.engine_client(a).request("POST", "/v1/deposit-addresses", json_body=body)
    again = cluster.engine_client(b).request("POST", "/v1/deposit-addresses", json_body=body)
    assert first.status_code in (200, 201) and again.status_code in (200, 201), (first.text, again.text)
    address = first.json()["address"]
    assert again.json()["address"] == address  # derived once, whichever node is asked
    payer = "0x00000000000000000000000000000000000b0b00"
    cluster.chain.set_balance(payer, ETHER)
    cluster.chain.rpc("anvil_impersonateAccount", payer)
    tx_hash = cluster.chain.rpc("eth_sendTransaction", {"from": payer, "to": address, "value": hex(777)})

    def confirmed() -> list | None:
        answer = cluster.engine_client(b).request(
            "GET", "/v1/deposits", params={"accountRef": "customer-nodes"}
        )
        transfers = answer.json().get("transfers", []) if answer.status_code == 200 else []
        return transfers if transfers and transfers[0]["status"] == "CONFIRMED" else None

    [transfer] = until("the deposit confirmed", confirmed, seconds=60, pause=0.5)
    assert (transfer["txHash"], transfer["amountMinor"]) == (tx_hash, "777")
    until(
        "the deposit's webhook delivered", lambda: _delivered(cluster, "deposit.confirmed") == 1, seconds=60
    )
    [event] = _received(cluster, "deposit.confirmed")
    assert event["data"]["txHash"] == tx_hash and event["data"]["accountRef"] == "customer-nodes"
    assert cluster.query(cluster.engine_url, "SELECT count(*) FROM deposit") == [(1,)]


def test_public_rate_limits_count_once_across_both_nodes_in_redis(cluster: Cluster) -> None:
    import redis

    statuses = []
    for n in range(PUBLIC_LIMIT + 2):
        node = (cluster.a, cluster.b)[n % 2]
        statuses.append(requests.get(f"{node.dispatch}/auth/invite/{'x' * 40}", timeout=10).status_code)
    # In memory each node would allow PUBLIC_LIMIT of its own: eight 404s here, no 429.
    assert statuses == [404] * PUBLIC_LIMIT + [429, 429]
    client = redis.Redis.from_url(cluster.redis_url)
    keys = client.keys("*")
    client.close()
    assert any(b"invite" in key for key in keys), keys


def test_a_proof_photo_uploaded_through_a_is_accepted_by_b_and_shown_by_both_tracking_views(
    cluster: Cluster,
) -> None:
    """The photo goes to the shared bucket with A's presigned URL; B finds it there when the
    delivery names it; both nodes' tracking views, which each kept the page from before the
    delivery, show the delivered state and the photo."""
    a, b = cluster.a, cluster.b
    order = _order_for_the_courier(cluster, a)
    picked = _post(a, f"/courier/orders/{order['id']}/status", cluster.courier, {"status": "picked_up"})
    assert picked.status_code == 200, picked.text
    link = _post(b, f"/orders/{order['id']}/tracking", cluster.owner, {})
    assert link.status_code == 201, link.text
    token = link.json()["token"]
    for node in (a, b):
        before = requests.get(f"{node.dispatch}/track/{token}", timeout=10).json()
        assert before["stage"] != "delivered" and before["proof"] is None, before

    upload = _post(
        a, f"/courier/orders/{order['id']}/proof/upload-url", cluster.courier, {"contentType": "image/jpeg"}
    )
    assert upload.status_code == 200, upload.text
    put = requests.put(upload.json()["url"], data=JPEG, headers={"Content-Type": "image/jpeg"}, timeout=10)
    assert put.status_code == 200
    delivered = _post(
        b,
        f"/courier/orders/{order['id']}/status",
        cluster.courier,
        {"status": "delivered", "photoKey": upload.json()["key"]},
    )
    assert delivered.status_code == 200, delivered.text
    for node in (a, b):
        view = requests.get(f"{node.dispatch}/track/{token}", timeout=10).json()
        assert view["stage"] == "delivered", view
        assert requests.get(view["proof"]["photoUrl"], timeout=10).content == JPEG


def test_a_signed_request_replayed_on_the_other_node_is_refused(cluster: Cluster) -> None:
    """The record of signatures seen is in the shared database, not in a node's memory."""
    client = cluster.engine_client(cluster.a)
    headers = client.signed_headers("GET", "/v1/payouts", b"", None)
    first = requests.get(f"{cluster.a.engine}/v1/payouts", headers=headers, timeout=10)
    assert first.status_code == 200, first.text
    replayed = requests.get(f"{cluster.b.engine}/v1/payouts", headers=headers, timeout=10)
    assert replayed.status_code == 401


def test_when_a_is_killed_b_carries_on_and_takes_over_its_single_holder_leases(cluster: Cluster) -> None:
    """kill -9 of node A (last: the other tests need it): B answers, pays, mails, and after the
    dead node's leases expire (30 s at most) watches the chain in its place."""
    a, b = cluster.a, cluster.b
    a.server.kill_group()
    payer = "0x00000000000000000000000000000000000b0b01"
    cluster.chain.set_balance(payer, ETHER)
    cluster.chain.rpc("anvil_impersonateAccount", payer)
    body = {"accountRef": "customer-after", "chainId": "eth_anvil"}
    address = (
        cluster.engine_client(b).request("POST", "/v1/deposit-addresses", json_body=body).json()["address"]
    )
    tx_hash = cluster.chain.rpc("eth_sendTransaction", {"from": payer, "to": address, "value": hex(555)})
    accepted = cluster.engine_client(b).submit_payout(
        "pyo_afterdeath01", "ETH", "4321", "0x" + f"{0xDEAD:040x}"
    )
    assert accepted["outcome"] == "ACCEPTED", accepted
    invited = _post(
        b,
        "/company/invites",
        cluster.owner,
        {"role": "dispatcher", "name": "Late", "email": "late@example.am"},
    )
    assert invited.status_code == 201, invited.text

    def paid() -> bool:
        return cluster.engine_client(b).get_payout("pyo_afterdeath01")["status"] == "COMPLETED"

    until("the payout completed by B alone", paid, seconds=60, pause=0.5)
    assert cluster.chain.balance("0x" + f"{0xDEAD:040x}") == 4321

    def confirmed() -> bool:
        answer = cluster.engine_client(b).request(
            "GET", "/v1/deposits", params={"accountRef": "customer-after"}
        )
        transfers = answer.json().get("transfers", []) if answer.status_code == 200 else []
        return bool(transfers) and transfers[0]["status"] == "CONFIRMED" and transfers[0]["txHash"] == tx_hash

    until("the deposit confirmed by B's watcher", confirmed, seconds=90, pause=1)
    assert any("To: late@example.am" in path.read_text() for path in b.outbox())
