"""Issue 31 across two real nodes: the ledger, the spending controls and the approvals hold under
concurrency when two `appliance serve` processes share one PostgreSQL database and one chain
(anvil). Signed submissions go through both nodes at once, both nodes' payout workers reserve
from the same operators' balances, and the administrator's commands (`appliance operator …`,
`appliance payout approve|reject`) run as real processes against the same database.

Each test has an operator of its own, so that one's waiting payouts never count in another's
balance or volume."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from appliance.engine.client import EngineClient, EngineError
from appliance.engine.ledger.controls import paused_detail
from tests.conftest import _admin, _database_url, free_port, postgres_url
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC
from tests.nodes.harness import Node, launch, until, wait_ready, write_settings

pytestmark = pytest.mark.server

OPERATORS = ("op_prefund0001", "op_volume00001", "op_approve0001", "op_pause000001")
ASSET = "eth_anvil:ETH"


@dataclasses.dataclass
class Pair:
    a: Node
    b: Node
    chain: Anvil
    engine_url: str
    secrets: dict[str, str]

    clients: dict[tuple[str, int], EngineClient] = dataclasses.field(default_factory=dict)

    def client(self, operator_id: str, node: Node, attempts: int = 3) -> EngineClient:
        """The operator's one client on the test's thread, pointed at ``node``: one client, so
        that two requests in the same second never carry the same signature (the nodes share the
        replay record)."""
        client = self.clients.setdefault((operator_id, attempts), self.fresh(operator_id, node, attempts))
        client.base_url = node.engine
        return client

    def fresh(self, operator_id: str, node: Node, attempts: int = 3) -> EngineClient:
        """A client of its own for a thread (whose requests' bodies differ from the others')."""
        return EngineClient(node.engine, operator_id, self.secrets[operator_id], max_attempts=attempts)

    def query(self, sql: str, *params: Any) -> list[tuple]:
        connection = psycopg2.connect(self.engine_url)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
        finally:
            connection.close()

    def appliance(self, *args: str) -> dict[str, Any]:
        """A real `appliance …` command on node A's data directory (the shared database), as the
        administrator runs it on either host; its JSON answer."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
        done = subprocess.run(
            [sys.executable, "-m", "appliance", *args, "--data-dir", str(self.a.data_dir), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def statuses(self, prefix: str) -> dict[str, tuple[str, str | None]]:
        rows = self.query(
            "SELECT payout_id, status, reason FROM payout WHERE payout_id LIKE %s", prefix + "%"
        )
        return {payout_id: (status, reason) for payout_id, status, reason in rows}

    def accounts(self, operator_id: str) -> dict[str, int]:
        rows = self.query(
            "SELECT account, balance_minor FROM ledger_account WHERE operator_id = %s AND chain_id = %s "
            "AND asset_code = %s",
            operator_id,
            "eth_anvil",
            "ETH",
        )
        return {account: int(balance) for account, balance in rows}


def _chains(chain: Anvil) -> str:
    return json.dumps(
        [
            {
                "id": "eth_anvil",
                "rpc_url": chain.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 1}],
            }
        ]
    )


def _provision(data_dir: Path) -> dict[str, str]:
    """The operators, written into the shared engine database by an app built in this process on
    node A's settings (the same master key as the nodes); their secrets."""
    from appliance.engine.app import create_app
    from appliance.engine.db import database
    from appliance.settings import load_settings
    from tests.engine.helpers import make_operator

    app = create_app(load_settings({"data_dir": str(data_dir)}, environ={}))
    made = {op: make_operator(app, op)["secret"] for op in OPERATORS}
    database.close_all()  # this process is a client from here on
    return made


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set: `make test-nodes` starts a PostgreSQL server")
    root = tmp_path_factory.mktemp("ledger-nodes")
    databases = {service: f"ledger_nodes_{service}_{os.getpid()}" for service in ("dispatch", "engine")}
    for name in databases.values():
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        _admin(f"CREATE DATABASE {name}")
    urls = {service: _database_url(name) for service, name in databases.items()}
    nodes: list[Node] = []
    with contextlib.ExitStack() as stack:
        stack.callback(
            lambda: [_admin(f"DROP DATABASE IF EXISTS {n} WITH (FORCE)") for n in databases.values()]
        )
        chain = stack.enter_context(running_anvil(free_port(), "--block-time", "1"))
        chain.set_balance(PAYOUT_WALLET, 100 * ETHER)  # the wallet affords everything: the ledger limits
        from appliance.common.keys import load_or_create_master_key

        shared = {
            "dispatch_database": urls["dispatch"],
            "engine_database": urls["engine"],
            "routing_engine": "none",
            "local_chain": False,
            "chains": _chains(chain),
            "payout_worker_seconds": 0.2,
            "shutdown_grace_seconds": 2.0,
        }
        directories = {name: root / name for name in ("a", "b")}
        for directory in directories.values():
            directory.mkdir()
            write_settings(directory, shared)
            (directory / "custody.key").write_text(TEST_MNEMONIC)
            (directory / "custody.key").chmod(0o600)
        load_or_create_master_key(directories["a"])
        (directories["b"] / "appliance.key").write_bytes((directories["a"] / "appliance.key").read_bytes())
        (directories["b"] / "appliance.key").chmod(0o600)
        for name, directory in directories.items():
            node = launch(name, directory, {})
            nodes.append(node)
            stack.callback(node.server.stop)
        wait_ready(nodes)
        made = _provision(directories["a"])
        yield (pair := Pair(nodes[0], nodes[1], chain, urls["engine"], made))
        # Postings and reservations of one operator take turns on its balance row; PostgreSQL
        # counts a deadlock it broke here (one between a completion and a reservation was).
        deadlocks = pair.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        assert deadlocks == [(0,)], "PostgreSQL broke a deadlock between the nodes' transactions"
        for node in nodes:
            assert "Traceback" not in node.log(), f"node {node.name} logged an error:\n{node.log()[-4000:]}"


def _submit_at_once(pair: Pair, operator_id: str, payouts: dict[str, tuple[int, str]]) -> list[Any]:
    """Submit ``payouts`` (id → amount, destination) from four threads at once, two on each node;
    the answers (or errors) in no particular order."""
    answers: queue.Queue = queue.Queue()
    ids = list(payouts)
    lanes = [(pair.a, ids[0::4]), (pair.b, ids[1::4]), (pair.a, ids[2::4]), (pair.b, ids[3::4])]
    start = threading.Barrier(len(lanes))

    def submit(node: Node, chunk: list[str]) -> None:
        client = pair.fresh(operator_id, node)
        start.wait()
        for payout_id in chunk:
            amount, destination = payouts[payout_id]
            try:
                answers.put(
                    client.submit_payout(
                        payout_id, "ETH", str(amount), destination, idempotency_key=payout_id
                    )
                )
            except Exception as exc:  # reported on the test's thread
                answers.put(exc)

    threads = [threading.Thread(target=submit, args=lane) for lane in lanes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [answers.get() for _ in range(answers.qsize())]


def _destinations(base: int, count: int) -> list[str]:
    return [f"0x{base + n:040x}" for n in range(count)]


def _reserved(pair: Pair, operator_id: str) -> dict[str, int]:
    """payout id → the amount its reservation put in flight (PAYOUT_RESERVE entries)."""
    rows = pair.query(
        "SELECT p.payout_id, e.amount_minor FROM ledger_entry e JOIN payout p ON e.ref = 'payout:' || p.id "
        "WHERE e.operator_id = %s AND e.kind = 'payout_reserve' AND e.account = 'in_flight'",
        operator_id,
    )
    out: dict[str, int] = {}
    for payout_id, amount in rows:
        assert payout_id not in out, f"{payout_id} reserved twice"
        out[payout_id] = int(amount)
    return out


PREFUND_AMOUNT = 10**16  # 0.01 ETH; a payout's fee on anvil is a few 10^13 wei
PREFUND_AFFORDABLE = 6
PREFUND_TOP_UP = 3


def test_a_prefunded_operator_paying_through_both_nodes_at_once_is_never_overdrawn(pair: Pair) -> None:
    """Item 31.1/31.4 on two nodes: 16 payouts submitted at once through both nodes by an operator
    credited with six payouts' worth and a half; both nodes' workers reserve from its one balance.
    Exactly six are signed and paid, the others wait for funds; a credit of three payouts' worth
    while ten wait, and exactly three more are paid. The available balance never went
    below zero (every balance entry, in the order the row lock let them in); what is reserved and
    paid is the sum of the accepted payouts; the balance is the credit less payouts and fees."""
    op = "op_prefund0001"
    credit = PREFUND_AFFORDABLE * PREFUND_AMOUNT + PREFUND_AMOUNT // 2
    pair.appliance("operator", "set-ledger-mode", op, "prefunded")
    credited = pair.appliance(
        "operator",
        "credit",
        op,
        "--asset",
        ASSET,
        "--amount",
        str(credit),
        "--memo",
        "prefund",
        "--by",
        "ops",
    )
    assert credited["balances"][0]["availableMinor"] == str(credit)
    payouts = {
        f"pyo_prefund{n:04d}": (PREFUND_AMOUNT, dest) for n, dest in enumerate(_destinations(0xAF00, 16))
    }
    answers = _submit_at_once(pair, op, payouts)
    assert [a.get("outcome") if isinstance(a, dict) else a for a in answers] == ["ACCEPTED"] * 16

    def settled(paid: int) -> dict[str, int] | None:
        counts: dict[str, int] = {}
        for status, reason in pair.statuses("pyo_prefund").values():
            key = "waiting" if status == "REQUESTED" and "prefunded" in (reason or "") else status
            counts[key] = counts.get(key, 0) + 1
        return counts if counts == {"COMPLETED": paid, "waiting": 16 - paid} else None

    until(
        "six payouts paid and ten waiting for the operator's funds", lambda: settled(6), seconds=90, pause=0.3
    )
    # A credit of three more while ten wait, looked at again by both nodes: exactly three more.
    topped = PREFUND_TOP_UP * PREFUND_AMOUNT
    pair.appliance("operator", "credit", op, "--asset", ASSET, "--amount", str(topped), "--memo", "top-up")
    credit += topped
    until("three more paid after the credit", lambda: settled(6 + PREFUND_TOP_UP), seconds=90, pause=0.3)
    # Never overdrawn: the balance account's entries, in the order their postings held its lock.
    running = 0
    for (amount,) in pair.query(
        "SELECT amount_minor FROM ledger_entry WHERE operator_id = %s AND account = 'balance' ORDER BY id", op
    ):
        running += int(amount)
        assert running >= 0, "the operator's available balance went below zero"
    reserved = _reserved(pair, op)
    paid = {p for p, (status, _r) in pair.statuses("pyo_prefund").items() if status == "COMPLETED"}
    assert set(reserved) == paid
    accounts = pair.accounts(op)
    accepted = sum(payouts[p][0] for p in paid)
    assert accounts["in_flight"] + accounts["paid_out"] == accepted
    assert accepted == (PREFUND_AFFORDABLE + PREFUND_TOP_UP) * PREFUND_AMOUNT
    fees = sum(
        int(fee)
        for (fee,) in pair.query(
            "SELECT fee_minor FROM payout WHERE operator_id = %s AND fee_minor IS NOT NULL", op
        )
    )
    assert fees > 0 and accounts["network_fees"] == fees
    assert accounts["balance"] == credit - accepted - fees >= 0
    assert (
        int(pair.appliance("operator", "balance", op)["balances"][0]["availableMinor"]) == accounts["balance"]
    )
    for payout_id in paid:
        assert pair.chain.balance(payouts[payout_id][1]) == PREFUND_AMOUNT  # paid once
    # Both nodes took submissions at once. (Which node's worker signs each payout is the lease's
    # race: under load one node's worker can claim them all, so that is not asserted.)
    for node in (pair.a, pair.b):
        assert "POST /v1/payouts 201" in node.log(), f"node {node.name} accepted none of the payouts"


VOLUME_AMOUNT = 2 * 10**15
VOLUME_LIMIT = 5 * VOLUME_AMOUNT
MAX_PAYOUT = 3 * 10**15


def test_the_maximum_per_payout_and_the_24_hour_volume_hold_exactly_across_both_nodes(pair: Pair) -> None:
    """A payout above the maximum is refused 400 by either node, nothing stored; twelve payouts
    within it submitted at once through both nodes against a 24 h volume of five: exactly five are
    reserved and paid in total, the seven others wait with the reason."""
    op = "op_volume00001"
    controls = pair.appliance(
        "operator",
        "set-limits",
        op,
        "--asset",
        ASSET,
        "--max-payout",
        str(MAX_PAYOUT),
        "--daily-volume",
        str(VOLUME_LIMIT),
    )
    assert controls["limits"][0]["dailyVolumeMinor"] == str(VOLUME_LIMIT)
    for n, node in enumerate((pair.a, pair.b)):
        refused = pair.client(op, node).request(
            "POST",
            "/v1/payouts",
            json_body={
                "payoutId": f"pyo_overmax{n:04d}",
                "asset": "ETH",
                "amountMinor": str(MAX_PAYOUT + 1),
                "destination": _destinations(0xBE00, 1)[0],
            },
            idempotency_key=f"overmax-{n}",
        )
        assert refused.status_code == 400, refused.text
        assert "above this operator's maximum per payout of ETH on eth_anvil" in refused.json()["detail"]
    assert pair.statuses("pyo_overmax") == {}

    payouts = {
        f"pyo_volume{n:04d}": (VOLUME_AMOUNT, dest) for n, dest in enumerate(_destinations(0xB000, 12))
    }
    answers = _submit_at_once(pair, op, payouts)
    assert [a.get("outcome") if isinstance(a, dict) else a for a in answers] == ["ACCEPTED"] * 12

    def settled() -> dict[str, int] | None:
        counts: dict[str, int] = {}
        for status, reason in pair.statuses("pyo_volume").values():
            key = "waiting" if status == "REQUESTED" and "rolling 24 h volume" in (reason or "") else status
            counts[key] = counts.get(key, 0) + 1
        return counts if counts == {"COMPLETED": 5, "waiting": 7} else None

    until("five payouts paid and seven held by the 24 h volume", settled, seconds=90, pause=0.3)
    reserved = _reserved(pair, op)
    assert len(reserved) == 5 and sum(reserved.values()) == VOLUME_LIMIT
    assert pair.query(
        "SELECT count(*) FROM broadcast b JOIN payout p ON p.id = b.payout_id WHERE p.operator_id = %s", op
    ) == [(5,)]


APPROVAL_ABOVE = 10**15


def test_a_payout_above_the_approval_threshold_waits_on_both_nodes_until_approved_and_is_paid_once(
    pair: Pair,
) -> None:
    """Two payouts above the threshold, one submitted to each node, wait (no reservation, no
    nonce) while both nodes' workers step them and a small one is paid; `appliance payout approve`
    (who and when recorded) lets one be paid once; `appliance payout reject` fails the other and
    leaves the prefunded operator's balance whole."""
    op = "op_approve0001"
    credit = 10**17
    pair.appliance("operator", "set-ledger-mode", op, "prefunded")
    pair.appliance("operator", "credit", op, "--asset", ASSET, "--amount", str(credit), "--memo", "prefund")
    pair.appliance("operator", "set-limits", op, "--asset", ASSET, "--approval-above", str(APPROVAL_ABOVE))
    big, small = 2 * APPROVAL_ABOVE, APPROVAL_ABOVE
    to_approve, to_reject, below = _destinations(0xA900, 3)
    for payout_id, node, amount, destination in (
        ("pyo_approve0001", pair.a, big, to_approve),
        ("pyo_reject00001", pair.b, big, to_reject),
        ("pyo_below00001", pair.b, small, below),
    ):
        answer = pair.client(op, node).submit_payout(payout_id, "ETH", str(amount), destination)
        assert answer["outcome"] == "ACCEPTED", answer

    until(
        "the small payout paid",
        lambda: pair.statuses("pyo_below")["pyo_below00001"][0] == "COMPLETED",
        seconds=60,
        pause=0.3,
    )
    waiting = "waiting for an administrator's approval"
    for payout_id in ("pyo_approve0001", "pyo_reject00001"):
        for node in (pair.a, pair.b):
            detail = until(
                f"{payout_id} shown waiting by node {node.name}",
                lambda payout_id=payout_id, node=node: (
                    d
                    if waiting in ((d := pair.client(op, node).get_payout(payout_id)).get("reason") or "")
                    else None
                ),
                seconds=30,
            )
            assert detail["status"] == "REQUESTED"
    time.sleep(3)  # more than one look by each node's worker (held payouts are looked at every 2 s)
    assert set(_reserved(pair, op)) == {"pyo_below00001"}
    assert pair.statuses("pyo_approve")["pyo_approve0001"][0] == "REQUESTED"

    approved = pair.appliance("payout", "approve", "pyo_approve0001", "--by", "anahit")
    assert (approved["decision"], approved["decidedBy"]) == ("approved", "anahit")
    rejected = pair.appliance(
        "payout", "reject", "pyo_reject00001", "--by", "aram", "--memo", "unknown payee"
    )
    assert (rejected["decision"], rejected["status"]) == ("rejected", "FAILED")
    decisions = pair.query(
        "SELECT p.payout_id, a.decision, a.decided_by, a.decided_at FROM payout_approval a "
        "JOIN payout p ON p.id = a.payout_id WHERE p.operator_id = %s ORDER BY p.payout_id",
        op,
    )
    assert [(p, d, who) for p, d, who, _at in decisions] == [
        ("pyo_approve0001", "approved", "anahit"),
        ("pyo_reject00001", "rejected", "aram"),
    ]
    assert all(at is not None for *_rest, at in decisions)

    until(
        "the approved payout paid",
        lambda: pair.statuses("pyo_approve")["pyo_approve0001"][0] == "COMPLETED",
        seconds=60,
        pause=0.3,
    )
    status, reason = pair.statuses("pyo_reject")["pyo_reject00001"]
    assert status == "FAILED" and "rejected by the administrator aram" in (reason or "")
    assert pair.chain.balance(to_approve) == big and pair.chain.balance(to_reject) == 0
    assert pair.query(
        "SELECT count(*) FROM broadcast b JOIN payout p ON p.id = b.payout_id WHERE p.payout_id = %s",
        "pyo_approve0001",
    ) == [(1,)]
    # The rejected payout never held anything: the balance is the credit less what was paid.
    assert set(_reserved(pair, op)) == {"pyo_approve0001", "pyo_below00001"}
    accounts = pair.accounts(op)
    assert accounts["in_flight"] == 0
    assert accounts["balance"] == credit - big - small - accounts["network_fees"]


def test_pausing_an_operator_stops_signing_on_both_nodes_within_two_seconds_and_resume_restarts(
    pair: Pair,
) -> None:
    """While payouts stream in through both nodes and both sign them, `appliance operator pause`:
    nothing of the operator is reserved later than 2 s after the pause was recorded, both nodes
    answer its submissions 503 with the documented detail, the payouts not yet signed wait with
    the pause as their reason; `appliance operator resume` and they are paid, and both nodes
    accept again."""
    op = "op_pause000001"
    stop = threading.Event()
    refusals: queue.Queue = queue.Queue()
    destinations = iter(_destinations(0xDA00, 1000))

    def stream(node: Node, lane: int) -> None:
        client = pair.fresh(op, node, attempts=1)
        for n in range(100):
            if stop.is_set():
                return
            time.sleep(0.1)  # ten a second per node: more than they sign, fewer than to pay later
            payout_id = f"pyo_pause{lane}{n:04d}"
            try:
                client.submit_payout(
                    payout_id, "ETH", str(10**13), next(destinations), idempotency_key=payout_id
                )
            except EngineError as exc:
                refusals.put((node.name, exc.status, (exc.body or {}).get("detail")))
                return

    lanes = [threading.Thread(target=stream, args=(node, n)) for n, node in enumerate((pair.a, pair.b))]
    for thread in lanes:
        thread.start()
    try:
        until(
            "a few of the operator's payouts signed",
            lambda: len(_reserved(pair, op)) >= 4,
            seconds=60,
            pause=0.1,
        )
        paused = pair.appliance("operator", "pause", op, "--by", "lilit")
        assert paused["paused"] is True and paused["pausedBy"] == "lilit"
        for thread in lanes:
            thread.join(timeout=30)
    finally:
        stop.set()
    for thread in lanes:
        thread.join()
    detail = paused_detail(op)
    # A stream that met the pause was refused with it (each node is asked once more below).
    answered = [refusals.get() for _ in range(refusals.qsize())]
    assert all(status == 503 and text == detail for _n, status, text in answered), answered
    for node in (pair.a, pair.b):
        refused = pair.client(op, node, attempts=1).request(
            "POST",
            "/v1/payouts",
            json_body={
                "payoutId": f"pyo_pausedon{node.name}",
                "asset": "ETH",
                "amountMinor": "1000",
                "destination": _destinations(0xDF00, 1)[0],
            },
            idempotency_key=f"paused-{node.name}",
        )
        assert refused.status_code == 503, refused.text
        assert refused.json()["detail"] == detail

    # Those signed before the pause finish; the others wait with the pause as their reason.
    def settled() -> dict[str, tuple[str, str | None]] | None:
        rows = pair.statuses("pyo_pause")
        done = all(
            status == "COMPLETED" or (status == "REQUESTED" and (reason or "").startswith(detail))
            for status, reason in rows.values()
        )
        return rows if done else None

    rows = until("the signed payouts paid and the others held by the pause", settled, seconds=60)
    held = [p for p, (status, _r) in rows.items() if status == "REQUESTED"]
    assert held, "every payout was signed before the pause: nothing showed that signing stopped"
    (paused_at,) = pair.query("SELECT paused_at FROM operator_control WHERE operator_id = %s", op)[0]
    reservations = pair.query(
        "SELECT created_at FROM ledger_entry WHERE operator_id = %s AND kind = 'payout_reserve' "
        "AND account = 'in_flight'",
        op,
    )
    assert max(at for (at,) in reservations) <= paused_at + timedelta(seconds=2)
    before = len(reservations)
    time.sleep(3)  # more than one look at each held payout by each node's worker
    assert len(_reserved(pair, op)) == before
    assert all(pair.statuses("pyo_pause")[p][0] == "REQUESTED" for p in held)

    resumed = pair.appliance("operator", "resume", op, "--by", "lilit")
    assert resumed["paused"] is False
    until(
        "the held payouts paid after the resume",
        lambda: all(pair.statuses("pyo_pause")[p][0] == "COMPLETED" for p in held),
        seconds=120,
        pause=0.3,
    )
    for node in (pair.a, pair.b):
        accepted = pair.client(op, node).submit_payout(
            f"pyo_resumed{node.name}", "ETH", "1000", _destinations(0xDE00 + ord(node.name), 1)[0]
        )
        assert accepted["outcome"] == "ACCEPTED"
