"""PostgreSQL restarted twice under load (issue 32): a real `appliance serve` with two serving
processes on a PostgreSQL server of the test's own, GPS batches and reads streaming on the
dispatch port and health polled on both. No answer is a 500: while the server is down writes are
503 (nothing saved), health fails; as soon as it is back, stale pooled connections are replaced
without a failed request (their first statement is retried once on a new connection), health
passes and writes go on. Every acknowledged GPS point is stored."""

from __future__ import annotations

import collections
import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg2
import pytest
import requests

from appliance.common import migrate
from appliance.common.db import make_database
from appliance.settings import load_settings
from tests.crash.harness import start_server
from tests.faults.own_postgres import OwnPostgres

pytestmark = pytest.mark.server


@pytest.fixture
def own_postgres():
    server = OwnPostgres()
    server.start()
    yield server
    server.remove()


def _wait_for(check, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.1)


def _database_check(base: str) -> str:
    try:
        return requests.get(f"{base}/healthz", timeout=10).json()["checks"]["database"]["status"]
    except (requests.RequestException, ValueError):
        return "no answer"


def _engine_ready(base: str) -> int:
    try:
        return requests.get(f"{base}/health/ready", timeout=10).status_code
    except requests.RequestException:
        return 0


def test_postgresql_restarted_twice_under_load_answers_no_500_and_loses_nothing_acknowledged(
    data_dir, own_postgres
) -> None:
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    urls = {}
    for service in ("dispatch", "engine"):
        urls[service] = own_postgres.create_database(f"fault_{service}")
        database = make_database(urls[service])
        migrate.apply(database, f"migrations.{service}")
        database.close_all()
    (data_dir / "appliance.toml").write_text(
        f'dispatch_database = "{urls["dispatch"]}"\nengine_database = "{urls["engine"]}"\n'
    )
    settings = load_settings({"data_dir": str(data_dir)}, environ={})
    app = create_app(settings)
    company = make_company("Arev")
    courier = make_member(app, company, "courier")
    dispatcher = make_member(app, company, "dispatcher")

    server = start_server(data_dir, "--processes", "2")
    statuses: collections.Counter[int] = collections.Counter()
    acknowledged: set[str] = set()
    stop = threading.Event()
    # Recent stamps: the serving processes' housekeeping pass deletes GPS points older than the
    # retention (90 days) but each courier's latest, and a pass that ran after the first points
    # of a January stamp had been acknowledged removed them (CI, a loaded machine).
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)

    def gps() -> None:
        session, index = requests.Session(), 0
        while not stop.is_set():
            index += 1
            stamp = (start + timedelta(seconds=index)).isoformat().replace("+00:00", "Z")
            body = {"points": [{"lat": 40.18, "lon": 44.51, "capturedAt": stamp}]}
            answer = session.post(
                f"{server.dispatch}/courier/location", json=body, headers=courier.headers, timeout=30
            )
            statuses[answer.status_code] += 1
            if answer.status_code == 202:
                acknowledged.add(stamp)
            time.sleep(0.01)

    def reads(path: str, headers: dict[str, str]) -> None:
        session = requests.Session()
        while not stop.is_set():
            statuses[session.get(f"{server.dispatch}{path}", headers=headers, timeout=30).status_code] += 1
            time.sleep(0.01)

    workers = [
        threading.Thread(target=gps),
        threading.Thread(target=reads, args=("/courier/me", courier.headers)),
        threading.Thread(target=reads, args=("/orders", dispatcher.headers)),
    ]
    try:
        for worker in workers:
            worker.start()
        _wait_for(lambda: statuses[202] >= 20)
        for _ in range(2):
            before = statuses[202]
            own_postgres.stop()
            _wait_for(lambda: _database_check(server.dispatch) == "fail")  # health says so
            _wait_for(lambda: _engine_ready(server.engine) == 503)
            _wait_for(lambda: statuses[503] > 0)  # writes refused, clearly
            own_postgres.start()
            _wait_for(lambda: _database_check(server.dispatch) == "pass")  # as soon as it is back
            _wait_for(lambda: _engine_ready(server.engine) == 200)
            _wait_for(lambda before=before: statuses[202] >= before + 20)  # writes go on by themselves
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=60)
        server.stop()
    log = server.log.read_text()
    trace = log.find("Traceback")
    assert statuses[500] == 0 and trace < 0, (statuses, log[max(0, trace - 300) : trace + 2500])
    assert set(statuses) <= {200, 202, 503}, statuses

    connection = psycopg2.connect(urls["dispatch"])
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT captured_at FROM courier_location WHERE courier_id = %s", (courier.courier.id,)
            )
            stored = {row[0].replace(tzinfo=UTC).isoformat().replace("+00:00", "Z") for row in cursor}
    finally:
        connection.close()
    assert acknowledged <= stored and len(acknowledged) >= 60


def test_a_pooled_connection_left_dead_by_a_restart_is_replaced_without_failing_the_request(
    data_dir, own_postgres
) -> None:
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    url = own_postgres.create_database("heal_dispatch")
    database = make_database(url)
    migrate.apply(database, "migrations.dispatch")
    database.close_all()
    settings = load_settings({"data_dir": str(data_dir), "dispatch_database": url}, environ={})
    app = create_app(settings)
    app.testing = True
    client = app.test_client()
    courier = make_member(app, make_company("Arev"), "courier")
    body = {"points": [{"lat": 40.18, "lon": 44.51, "capturedAt": "2026-01-01T00:00:00Z"}]}
    assert client.get("/courier/me", headers=courier.headers).status_code == 200  # pools a connection
    own_postgres.stop()
    own_postgres.start()
    # The pooled connection is dead; the read and the write (its BEGIN) each get a new one.
    assert client.get("/courier/me", headers=courier.headers).status_code == 200
    client.get("/courier/me", headers=courier.headers)
    own_postgres.stop()
    own_postgres.start()
    assert client.post("/courier/location", json=body, headers=courier.headers).status_code == 202
