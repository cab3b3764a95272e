"""Streams woken when an event commits: after-commit callbacks, the per-process wakes, a real
server whose streams never poll, and another process's commits (SQLite's data_version,
PostgreSQL's LISTEN/NOTIFY)."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from appliance.common.db import after_commit, before_commit, connection, make_database, write_transaction
from appliance.dispatch.app import create_app
from appliance.dispatch.db import database
from appliance.dispatch.events import stream as stream_module
from appliance.dispatch.events.store import events_after, record_event
from appliance.dispatch.events.wake import Wakes, wakes
from tests.conftest import serving
from tests.dispatch.factory import make_company, make_member

ORDER = {
    "recipientName": "A",
    "recipientPhone": "+37400000",
    "addressLabelHy": "B",
    "pin": {"lat": 40.18, "lon": 44.51},
}


@pytest.fixture
def scratch(tmp_path: Path):
    db = make_database(f"sqlite:///{tmp_path / 'scratch.db'}")
    db.connect()
    db.execute_sql("CREATE TABLE t (x INTEGER)")
    yield db
    db.close()


def test_an_after_commit_callback_runs_only_once_the_transaction_commits(scratch) -> None:
    heard: list[int] = []
    with write_transaction(scratch):
        scratch.execute_sql("INSERT INTO t VALUES (1)")
        after_commit(scratch, lambda: heard.append(len(scratch.execute_sql("SELECT x FROM t").fetchall())))
        with scratch.atomic():  # a savepoint's end is not the commit
            pass
        assert heard == []
    assert heard == [1]


def test_an_after_commit_callback_is_dropped_when_the_transaction_rolls_back(scratch) -> None:
    heard: list[str] = []
    with pytest.raises(RuntimeError), write_transaction(scratch):
        after_commit(scratch, lambda: heard.append("rolled back"))
        raise RuntimeError("refused")
    with write_transaction(scratch):
        after_commit(scratch, lambda: heard.append("committed"))
    assert heard == ["committed"]


def test_a_before_commit_callback_writes_inside_the_transaction_and_not_after_a_rollback(scratch) -> None:
    with pytest.raises(RuntimeError), write_transaction(scratch):
        before_commit(scratch, lambda: scratch.execute_sql("INSERT INTO t VALUES (1)"))
        raise RuntimeError("refused")
    with write_transaction(scratch):
        before_commit(scratch, lambda: scratch.execute_sql("INSERT INTO t VALUES (2)"))
        assert scratch.execute_sql("SELECT x FROM t").fetchall() == []
    assert scratch.execute_sql("SELECT x FROM t").fetchall() == [(2,)]


def test_an_after_commit_callback_outside_a_transaction_runs_at_once(scratch) -> None:
    heard: list[str] = []
    after_commit(scratch, lambda: heard.append("now"))
    assert heard == ["now"]


def test_a_wait_returns_for_a_newer_event_of_its_own_key_only() -> None:
    wakes = Wakes()
    wakes.publish(("db", 1), 5)
    assert wakes.wait(("db", 1), 4, timeout=0) is True
    assert wakes.wait(("db", 1), 5, timeout=0) is False  # nothing newer than what was read
    wakes.publish(("db", 2), 9)  # another company
    wakes.publish(("other.db", 1), 9)  # the same company number in another database
    wakes.publish(("db", 1), 3)  # an older id heard late changes nothing
    assert wakes.latest(("db", 1)) == 5
    assert wakes.wait(("db", 1), 5, timeout=0) is False


def _listen(url: str, headers: dict[str, str], heard: queue.Queue[bytes]) -> None:
    with contextlib.suppress(requests.RequestException):  # the server stops under the open stream
        _read_stream(url, headers, heard)


def _read_stream(url: str, headers: dict[str, str], heard: queue.Queue[bytes]) -> None:
    cursor = requests.get(f"{url}/events/latest-cursor", headers=headers, timeout=5).json()["cursor"]
    with requests.get(f"{url}/events?cursor={cursor}", headers=headers, stream=True, timeout=60) as response:
        lines = response.iter_lines()
        heard.put(next(lines))  # the opening "retry" line: the stream is open
        for line in lines:
            if line.startswith(b"event: "):
                heard.put(line)


def _stream_hears(app, headers: dict[str, str], write) -> list[bytes]:
    """Open a stream on a real server and write twice, each time after the stream delivered what
    came before: the second write surely finds the stream waiting, and the stream never polls
    (the tests set the poll and heartbeat intervals to an hour), so only a wake delivers it."""
    heard: queue.Queue[bytes] = queue.Queue()
    got: list[bytes] = []
    with serving(app) as url:
        threading.Thread(target=_listen, args=(url, headers, heard), daemon=True).start()
        assert heard.get(timeout=20).startswith(b"retry")
        for _ in range(2):
            write(url)
            try:
                got.append(heard.get(timeout=20))
            except queue.Empty:
                break
    return got


def _never_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream that reads again only when woken: no poll, no heartbeat within the test."""
    monkeypatch.setattr(stream_module, "POLL_SECONDS", 3600.0)
    monkeypatch.setattr(stream_module, "HEARTBEAT_SECONDS", 3600.0)


def test_a_stream_receives_an_event_when_it_commits_without_polling(settings, monkeypatch) -> None:
    _never_poll(monkeypatch)
    app = create_app(settings.replace(event_stream_seconds=60))
    dispatcher = make_member(app, make_company("Arev"), "dispatcher")

    def write(url: str) -> None:
        assert requests.post(f"{url}/orders", json=ORDER, headers=dispatcher.headers, timeout=10).ok

    assert _stream_hears(app, dispatcher.headers, write) == [b"event: order.created"] * 2


WRITER = """
import sys
from appliance.common.db import bind_database, write_transaction, connection
from appliance.dispatch.db import database
from appliance.dispatch.events.store import events_after, record_event
bind_database(database, sys.argv[1])
with connection(database), write_transaction(database):
    record_event(int(sys.argv[2]), "order.created", {"from": "another process"})
"""


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_stream_hears_an_event_another_process_commits(settings, request, monkeypatch, backend) -> None:
    """Another serving process's commit: on SQLite through the file's data_version watched by
    this process, on PostgreSQL through LISTEN/NOTIFY."""
    _never_poll(monkeypatch)
    if backend == "postgres":
        migrated_postgres = request.getfixturevalue("migrated_postgres")
        settings = settings.replace(dispatch_database=migrated_postgres("migrations.dispatch"))
    app = create_app(settings.replace(event_stream_seconds=60))
    company = make_company("Arev")
    dispatcher = make_member(app, company, "dispatcher")

    def write(_server: str) -> None:
        assert wakes.listening(database).wait(10)  # the first stream started this process's hearing
        url = settings.dispatch_db_url
        subprocess.run([sys.executable, "-c", WRITER, url, str(company.id)], check=True, timeout=60)

    try:
        heard = _stream_hears(app, dispatcher.headers, write)
    finally:
        database.close_all()
    assert heard == [b"event: order.created"] * 2


@pytest.mark.postgres
def test_on_postgresql_events_commit_in_the_order_of_their_ids(settings, migrated_postgres) -> None:
    """A writer that recorded its event first but commits last: its event's id is still the
    later one, so a stream woken by the other event cannot read past it."""
    create_app(settings.replace(dispatch_database=migrated_postgres("migrations.dispatch")))
    company = make_company("Arev")
    first_recorded, go = threading.Event(), threading.Event()
    committed: list[str] = []

    def writer(name: str) -> None:
        with connection(database):
            with write_transaction(database):
                record_event(company.id, "order.created", {"writer": name})
                if name == "first":
                    first_recorded.set()
                    go.wait(20)
            committed.append(name)

    first = threading.Thread(target=writer, args=("first",))
    first.start()
    assert first_recorded.wait(20)
    second = threading.Thread(target=writer, args=("second",))
    second.start()
    second.join(20)  # the second writer commits while the first still waits
    go.set()
    first.join(20)
    with connection(database):
        by_id = [json.loads(payload)["writer"] for _, _, payload, _ in events_after(company.id, 0, 10)]
    database.close_all()
    assert by_id == committed == ["second", "first"]
