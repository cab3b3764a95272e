"""kill -9 of the whole server mid-stream, three times, then a restart on the same data directory
with no manual step: every acknowledged write is there, none is doubled.

One real server (SQLite, one serving process plus its workers: the embedded chain mines, the
payout pipeline signs and sends) takes four kinds of writes at once from client threads: GPS
batches, order status moves, cash deliveries with settlements and their confirmations, and
signed payouts on the embedded chain. Each round kills the process group at a random moment while
they flow. After the third, the server starts once more, the payouts run to completion, and the
databases and the chain are compared with what the clients were told.
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from tests.conftest import BACKEND
from tests.crash.harness import Server, start_server

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        BACKEND != "sqlite", reason="kills a server on the SQLite files of its data directory"
    ),
]

ROUNDS = 3
ORDERS_PER_ROUND = 12
CASH_ORDERS_PER_ROUND = 6
PAYOUT_PAUSE = 0.15  # seconds: enough payouts per round, few enough for the pipeline to finish soon
RANK = {"assigned": 0, "picked_up": 1, "arrived": 2, "delivered": 3}


class Ledger:
    """What the clients were told, per kind of write."""

    def __init__(self) -> None:
        self.batches: set[int] = set()
        self.moves: list[tuple[int, str]] = []
        self.collected: dict[int, int] = {}  # order id -> amount, for acknowledged deliveries
        self.settlements: dict[int, int] = {}  # settlement id -> expected amount
        self.confirmed: set[int] = set()
        self.payouts: dict[str, int] = {}  # payout id -> amount
        self.surprises: list[str] = []  # answers that are neither an acknowledgement nor a crash


def _run_until_killed(step: Callable[[], None], stop: threading.Event, ledger: Ledger) -> Callable[[], None]:
    from appliance.engine.client import EngineError

    def loop() -> None:
        while not stop.is_set():
            try:
                step()
            except requests.RequestException:
                return  # the server is gone: what was in flight is unacknowledged
            except EngineError as exc:
                if exc.status is None:  # the engine client's word for the same
                    return
                ledger.surprises.append(str(exc))
                return
            except AssertionError as exc:
                ledger.surprises.append(str(exc))
                return

    return loop


def test_acknowledged_writes_survive_three_kill_9_rounds_and_none_is_doubled(
    settings, tmp_path: Path
) -> None:
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine
    from appliance.engine.chain.registry import open_local_chain
    from appliance.engine.client import EngineClient
    from appliance.engine.custody_file import create_custody_key, load_custody
    from tests.dispatch.factory import make_company, make_member
    from tests.dispatch.orders_helpers import assigned_order
    from tests.engine.helpers import make_operator

    dispatch = create_dispatch(settings)
    client = dispatch.test_client()
    company = make_company()
    dispatcher = make_member(dispatch, company, "dispatcher")
    tracker, mover, cashier = (make_member(dispatch, company, "courier") for _ in range(3))
    rounds_of_moves = [
        [assigned_order(client, dispatcher, mover)["id"] for _ in range(ORDERS_PER_ROUND)]
        for _ in range(ROUNDS)
    ]
    rounds_of_cash = [
        [
            (o["id"], 1000 + 10 * i + r)
            for i, o in enumerate(
                assigned_order(client, dispatcher, cashier, isCod=True, amountAmd=1000 + 10 * i + r)
                for i in range(10)
            )
        ]
        for r in range(ROUNDS)
    ]
    operator = make_operator(create_engine(settings))
    create_custody_key(settings.data_dir)
    custody = load_custody(settings.data_dir, "")
    assert custody is not None
    chain = open_local_chain(settings)
    try:
        chain.faucet("USDC", custody.payout_address, 10**12)
        chain.faucet("ETH", custody.payout_address, 10**20)
        chain.faucet("ETH", custody.fee_address, 10**19)
        usdc = chain.usdc_contract
    finally:
        chain.close()

    ledger = Ledger()
    base = (datetime.now(UTC) - timedelta(hours=5)).replace(microsecond=0)
    gps_numbers = iter(range(10**6))
    payout_numbers = iter(range(10**6))
    rng = random.Random(18)

    def confirm(server: Server, settlement_id: str) -> None:
        done = requests.post(
            f"{server.dispatch}/cash/settlements/{settlement_id}/confirm",
            headers=dispatcher.headers,
            timeout=30,
        )
        assert done.status_code == 200, done.text
        ledger.confirmed.add(int(settlement_id))

    def dispatcher_confirms_what_awaits(server: Server) -> None:
        listed = requests.get(f"{server.dispatch}/cash/settlements", headers=dispatcher.headers, timeout=30)
        assert listed.status_code == 200, listed.text
        for settlement in listed.json()["settlements"]:
            confirm(server, settlement["id"])

    def writers(server: Server, round_number: int) -> list[Callable[[], None]]:
        session = requests.Session()
        moves = iter(
            [
                (order, status)
                for order in rounds_of_moves[round_number]
                for status in ("picked_up", "delivered")
            ]
        )
        cash = iter(rounds_of_cash[round_number])
        engine = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)

        def gps() -> None:
            n = next(gps_numbers)
            points = [
                {"lat": 40.18, "lon": 44.51, "capturedAt": (base + timedelta(seconds=n * 10 + i)).isoformat()}
                for i in range(10)
            ]
            answer = session.post(
                f"{server.dispatch}/courier/location",
                json={"points": points},
                headers=tracker.headers,
                timeout=30,
            )
            assert answer.status_code == 202, answer.text
            ledger.batches.add(n)

        def move() -> None:
            order, status = next(moves, (None, ""))
            if order is None:
                time.sleep(0.05)
                return
            answer = requests.post(
                f"{server.dispatch}/courier/orders/{order}/status",
                json={"status": status},
                headers=mover.headers,
                timeout=30,
            )
            assert answer.status_code == 200, answer.text
            ledger.moves.append((int(order), status))

        def deliver_and_settle() -> None:
            order, amount = next(cash, (None, 0))
            if order is None:
                time.sleep(0.05)
                return
            for status in ("picked_up", "delivered"):
                answer = requests.post(
                    f"{server.dispatch}/courier/orders/{order}/status",
                    json={"status": status},
                    headers=cashier.headers,
                    timeout=30,
                )
                assert answer.status_code == 200, answer.text
            ledger.collected[int(order)] = amount
            answer = requests.post(
                f"{server.dispatch}/courier/cash/settle", headers=cashier.headers, timeout=30
            )
            if answer.status_code == 409:  # a handover submitted before the last kill still awaits
                dispatcher_confirms_what_awaits(server)
                answer = requests.post(
                    f"{server.dispatch}/courier/cash/settle", headers=cashier.headers, timeout=30
                )
            assert answer.status_code == 201, answer.text
            settlement = answer.json()["settlement"]
            ledger.settlements[int(settlement["id"])] = settlement["expectedAmd"]
            confirm(server, settlement["id"])

        def payout() -> None:
            n = next(payout_numbers)
            amount = 1000 + n
            answer = engine.submit_payout(
                f"pyo_crash{n:05d}", "USDC", str(amount), _destination(n), idempotency_key=f"crash-{n:05d}"
            )
            assert answer["outcome"] == "ACCEPTED", answer
            ledger.payouts[f"pyo_crash{n:05d}"] = amount
            time.sleep(PAYOUT_PAUSE)

        return [gps, move, deliver_and_settle, payout]

    for round_number in range(ROUNDS):
        server = start_server(settings.data_dir, "--processes", "1")
        stop = threading.Event()
        threads = [
            threading.Thread(target=_run_until_killed(step, stop, ledger), daemon=True)
            for step in writers(server, round_number)
        ]
        for thread in threads:
            thread.start()
        time.sleep(rng.uniform(1.5, 3.0))
        server.kill_group()  # mid-stream: every writer has a request in flight or about to be
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        assert not ledger.surprises, ledger.surprises

    assert len(ledger.batches) > 10 and len(ledger.moves) > 10 and len(ledger.payouts) > 5
    assert ledger.settlements, "no settlement was acknowledged: the rounds were too short"

    server = start_server(settings.data_dir, "--processes", "1")
    try:
        engine = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
        statuses = _until_payouts_finish(engine, list(ledger.payouts))
        dispatcher_confirms_what_awaits(server)
    finally:
        server.stop()

    _check_dispatch(settings.data_dir / "dispatch.db", ledger, base, tracker.courier.id)
    _check_payouts(settings, ledger, statuses, usdc)


def _destination(n: int) -> str:
    return "0x" + f"{0xC0FFEE00 + n:040x}"


def _until_payouts_finish(engine, payout_ids: list[str], seconds: float = 90) -> dict[str, str]:
    deadline = time.monotonic() + seconds
    while True:
        statuses = {payout_id: engine.get_payout(payout_id)["status"] for payout_id in payout_ids}
        if (
            all(status in {"COMPLETED", "FAILED"} for status in statuses.values())
            or time.monotonic() > deadline
        ):
            return statuses
        time.sleep(0.5)


def _check_dispatch(path: Path, ledger: Ledger, base: datetime, tracker_id: int) -> None:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT captured_at FROM courier_location WHERE courier_id = ?", (tracker_id,))
        seconds = [
            round((datetime.fromisoformat(r[0]).replace(tzinfo=UTC) - base).total_seconds()) for r in rows
        ]
        kept = {s // 10 for s in seconds}
        assert ledger.batches <= kept, f"acknowledged GPS batches lost: {sorted(ledger.batches - kept)}"
        assert len(seconds) == len(set(seconds)) == 10 * len(kept), "a GPS batch doubled or cut"

        status = dict(conn.execute('SELECT id, status FROM "order"').fetchall())
        lost = [(o, s) for o, s in ledger.moves if RANK.get(status[o], -1) < RANK[s]]
        assert not lost, f"acknowledged status moves lost: {lost}"
        doubled = conn.execute(
            "SELECT order_id, to_status, count(*) FROM order_event WHERE kind = 'status_changed'"
            " GROUP BY order_id, to_status HAVING count(*) > 1"
        ).fetchall()
        assert not doubled, f"status moves recorded twice: {doubled}"

        collections = conn.execute(
            "SELECT order_id, count(*), sum(amount_amd) FROM collection GROUP BY order_id"
        )
        by_order = {order: (count, amount) for order, count, amount in collections}
        assert all(count == 1 for count, _ in by_order.values()), f"cash collected twice: {by_order}"
        missing = {o: a for o, a in ledger.collected.items() if by_order.get(o, (0, None))[1] != a}
        assert not missing, f"acknowledged deliveries without their collection: {missing}"

        settlements = {
            sid: (expected, state)
            for sid, expected, state in conn.execute("SELECT id, expected_amd, status FROM settlement")
        }
        for sid, expected in ledger.settlements.items():
            assert settlements.get(sid, (None, None))[0] == expected, f"settlement {sid} lost or changed"
        assert all(settlements[sid][1] == "confirmed" for sid in ledger.confirmed)
        covered = dict(
            conn.execute(
                "SELECT settlement_id, sum(amount_amd) FROM collection WHERE settlement_id IS NOT NULL"
                " GROUP BY settlement_id"
            ).fetchall()
        )
        assert covered == {sid: expected for sid, (expected, _) in settlements.items()}, "cash settled twice"


def _check_payouts(settings, ledger: Ledger, statuses: dict[str, str], usdc: str) -> None:
    from appliance.engine.chain.registry import open_local_chain

    with sqlite3.connect(settings.data_dir / "engine.db") as conn:
        stored = dict(conn.execute("SELECT payout_id, amount_minor FROM payout").fetchall())
    for payout_id, amount in ledger.payouts.items():
        assert stored.get(payout_id) == str(amount), f"acknowledged payout {payout_id} lost"
    assert all(status == "COMPLETED" for status in statuses.values()), statuses
    chain = open_local_chain(settings)
    try:
        for payout_id, amount in stored.items():
            n = int(payout_id.removeprefix("pyo_crash"))
            received = chain.balance(_destination(n), usdc)
            # An unacknowledged submission that was stored anyway is paid too, once.
            assert received == int(amount), f"{payout_id}: {received} received for {amount}"
    finally:
        chain.close()
