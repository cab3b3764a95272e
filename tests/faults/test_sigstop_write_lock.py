"""A process holding the cross-process SQLite write lock that stops (SIGSTOP, a debugger) cannot
stall the writers of a real `appliance serve` past a bound (issue 32: GPS writes in both serving
processes waited the whole 20 s). A helper process takes the lock the way a writer does (the
flock beside the database, then SQLite's own write lock) and stops itself while GPS batches and
reads stream: writes are answered 503 `database_busy` (nothing saved), reads go on, and once it
continues and lets go, writes are accepted again. No 500; every acknowledged point stored."""

from __future__ import annotations

import collections
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests

from tests.conftest import BACKEND
from tests.crash.harness import start_server

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(BACKEND != "sqlite", reason="the write lock is SQLite's"),
]

HOLDER = """
import fcntl, os, signal, sqlite3, sys
path = sys.argv[1]
fd = os.open(path + "-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
db = sqlite3.connect(path, isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
os.kill(os.getpid(), signal.SIGSTOP)
db.execute("ROLLBACK")
"""


def _wait_for(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def test_a_stopped_holder_of_the_write_lock_makes_writes_503_not_a_stall_and_they_resume(
    settings, data_dir
) -> None:
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    app = create_app(settings)
    courier = make_member(app, make_company("Arev"), "courier")
    server = start_server(data_dir, "--processes", "2", env={"APPLIANCE_SQLITE_BUSY_TIMEOUT_MS": "1000"})
    statuses: collections.Counter[tuple[str, int]] = collections.Counter()
    acknowledged: set[str] = set()
    stop = threading.Event()
    # Recent stamps: the serving processes' housekeeping pass deletes GPS points older than the
    # retention (90 days) but each courier's latest, and a pass that ran after the first points
    # of a January stamp had been acknowledged removed them (CI, a loaded machine).
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    busy_details: list[dict] = []

    def gps() -> None:
        session, index = requests.Session(), 0
        while not stop.is_set():
            index += 1
            stamp = (start + timedelta(seconds=index)).isoformat().replace("+00:00", "Z")
            body = {"points": [{"lat": 40.18, "lon": 44.51, "capturedAt": stamp}]}
            answer = session.post(
                f"{server.dispatch}/courier/location", json=body, headers=courier.headers, timeout=60
            )
            statuses[("write", answer.status_code)] += 1
            if answer.status_code == 202:
                acknowledged.add(stamp)
            elif answer.status_code == 503:
                busy_details.append(answer.json())
            time.sleep(0.01)

    def reads() -> None:
        session = requests.Session()
        while not stop.is_set():
            answer = session.get(f"{server.dispatch}/courier/me", headers=courier.headers, timeout=60)
            statuses[("read", answer.status_code)] += 1
            time.sleep(0.01)

    workers = [threading.Thread(target=gps), threading.Thread(target=gps), threading.Thread(target=reads)]
    holder = None
    try:
        for worker in workers:
            worker.start()
        _wait_for(lambda: statuses[("write", 202)] >= 20)
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(data_dir / "dispatch.db")], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        _wait_for(lambda: holder.poll() is None and _stopped(holder.pid))
        reads_before = statuses[("read", 200)]
        _wait_for(lambda: statuses[("write", 503)] >= 4, seconds=15)  # answered, not stalled
        _wait_for(lambda: statuses[("read", 200)] >= reads_before + 10)  # reads go on meanwhile
        accepted = statuses[("write", 202)]
        holder.send_signal(signal.SIGCONT)
        holder.wait(timeout=30)
        _wait_for(lambda: statuses[("write", 202)] >= accepted + 20)  # writes resume by themselves
    finally:
        stop.set()
        if holder is not None and holder.poll() is None:
            holder.send_signal(signal.SIGCONT)
            holder.kill()
        for worker in workers:
            worker.join(timeout=60)
        server.stop()
    assert {status for _, status in statuses} <= {200, 202, 503}, statuses
    assert busy_details[0]["code"] == "database_busy" and "nothing was saved" in busy_details[0]["detail"]
    database = sqlite3.connect(data_dir / "dispatch.db")
    try:
        stored = {
            row[0]
            for row in database.execute(
                "SELECT captured_at FROM courier_location WHERE courier_id = ?", (courier.courier.id,)
            )
        }
    finally:
        database.close()
    stored_stamps = {
        datetime.fromisoformat(s).replace(tzinfo=UTC).isoformat().replace("+00:00", "Z") for s in stored
    }
    assert acknowledged <= stored_stamps


def _stopped(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "T"
