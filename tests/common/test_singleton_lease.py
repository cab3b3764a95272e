"""The single-holder lease every one-at-a-time job uses (appliance/common/lease.py), on a table of
its own on SQLite and PostgreSQL, and on a plain sqlite3 file as the embedded chain keeps its
miner's: two holders never hold it at once, an expired lease or one of a process that no longer
runs is taken over, a renewal keeps it, a release frees it at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import peewee
import pytest

from appliance.common import clock, holders
from appliance.common.db import UTCDateTimeField, make_database
from appliance.common.lease import SingletonLease, SqliteRow
from tests.conftest import empty_postgres

BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]
MINUTE = timedelta(minutes=1)
ANOTHER_HOST = "elsewhere~0123abcd/1/2/abcd1234"


@pytest.fixture
def job(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[type[peewee.Model]]:
    db = make_database(f"sqlite:///{tmp_path / 'l.db'}") if request.param == "sqlite" else empty_postgres()
    proxy = peewee.DatabaseProxy()
    proxy.initialize(db)

    class Job(peewee.Model):
        name = peewee.CharField(primary_key=True)
        holder = peewee.CharField(null=True)
        lease_until = UTCDateTimeField(null=True)
        next_run_at = UTCDateTimeField(null=True)

        class Meta:
            database = proxy

    clock.freeze(clock.now())
    with proxy.connection_context():
        db.create_tables([Job])
        yield Job
    clock.reset()
    if not db.is_closed():
        db.close()


def _lease(job: type[peewee.Model], holder: str | None = None) -> SingletonLease:
    return SingletonLease.of(job, "sweep", duration=MINUTE, holder=holder or holders.instance_holder())


def _dead_holder() -> str:
    """A holder of a process of this host that has exited."""
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from appliance.common.holders import instance_holder; print(instance_holder())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return child.stdout.strip()


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_two_holders_never_hold_one_lease_at_once(job) -> None:
    first, second = _lease(job), _lease(job)
    assert first.take()  # creates the row
    assert not second.take()
    assert first.take()  # its holder takes it again: a renewal
    assert not second.take() and not second.renew() and not second.release()
    assert job.get_by_id("sweep").holder == first.holder


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_workers_racing_for_a_new_lease_leave_exactly_one_holder(job) -> None:
    database = job._meta.database
    leases = [_lease(job) for _ in range(6)]
    won: list[SingletonLease] = []
    start = threading.Barrier(len(leases))

    def race(lease: SingletonLease) -> None:
        with database.connection_context():
            start.wait()
            if lease.take():
                won.append(lease)

    threads = [threading.Thread(target=race, args=(lease,)) for lease in leases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert job.get_by_id("sweep").holder == won[0].holder


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_an_expired_lease_is_taken_over_and_its_old_holder_cannot_renew_or_free_it(job) -> None:
    first, second = _lease(job), _lease(job)
    assert first.take()
    clock.advance(MINUTE + timedelta(seconds=1))  # the first holder hung
    assert second.take()
    assert not first.renew() and not first.release()
    assert not first.take()
    assert job.get_by_id("sweep").holder == second.holder


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_a_lease_of_a_process_of_this_host_that_no_longer_runs_is_free_at_once(job) -> None:
    assert _lease(job, _dead_holder()).take()
    assert _lease(job).take()  # no wait for the dead holder's minute
    job.update(holder=ANOTHER_HOST).execute()  # another host's holder is never judged: it expires
    assert not _lease(job).take()


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_a_renewal_keeps_the_lease_and_a_release_frees_it_at_once(job) -> None:
    first, second = _lease(job), _lease(job)
    assert first.take()
    clock.advance(timedelta(seconds=50))
    assert first.renew()
    clock.advance(timedelta(seconds=50))  # past the first minute, not past the renewal's
    assert not second.take()
    assert first.release(next_run_at=clock.now() + MINUTE)
    row = job.get_by_id("sweep")
    assert (row.holder, row.lease_until, row.next_run_at) == (None, None, clock.now() + MINUTE)
    assert second.take()


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_a_job_due_once_per_interval_waits_for_its_time_even_for_its_own_holder(job) -> None:
    def due(row, moment) -> bool:
        return row.next_run_at is None or row.next_run_at <= moment

    lease = _lease(job)
    assert lease.take(due=due, create={"next_run_at": None})
    assert lease.release(next_run_at=clock.now() + timedelta(minutes=10))
    assert not lease.take(due=due)
    clock.advance(timedelta(minutes=10))
    row = lease.take_row(due=due)
    assert row is not None and row.holder == lease.holder and row.lease_until == clock.now() + MINUTE


@pytest.mark.parametrize("job", BACKENDS, indirect=True)
def test_a_held_lease_is_renewed_once_per_half_lease_not_at_every_pass(job) -> None:
    lease = _lease(job)
    started = clock.now()
    assert lease.hold(create={"next_run_at": started}, next_run_at=None)  # creates the row
    taken = job.get_by_id("sweep")
    assert (taken.lease_until, taken.next_run_at) == (started + MINUTE, started)
    clock.advance(timedelta(seconds=20))
    assert lease.hold(next_run_at=clock.now()) and job.get_by_id("sweep").lease_until == taken.lease_until
    assert job.get_by_id("sweep").next_run_at == started  # no write at all
    clock.advance(timedelta(seconds=20))  # less than half of it left now
    assert lease.hold(next_run_at=clock.now())
    renewed = job.get_by_id("sweep")
    assert (renewed.lease_until, renewed.next_run_at) == (clock.now() + MINUTE, clock.now())
    assert not _lease(job).hold()


def test_a_lease_kept_in_a_plain_sqlite_file_follows_the_same_rules(tmp_path: Path) -> None:
    path = tmp_path / "chain.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE lease (name TEXT PRIMARY KEY, holder TEXT, until REAL NOT NULL)")

    @contextmanager
    def begin() -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        finally:
            conn.close()

    def read() -> tuple[str | None, float]:
        with sqlite3.connect(path) as conn:
            return conn.execute("SELECT holder, until FROM lease WHERE name = 'miner'").fetchone()

    def miner(holder: str | None = None) -> SingletonLease:
        return SingletonLease(SqliteRow(begin, "miner"), MINUTE, holder=holder or holders.instance_holder())

    first, second = miner(), miner()
    assert first.take() and not second.take()
    assert read()[0] == first.holder and read()[1] > time.time() + 50
    assert first.take(duration=timedelta(hours=1)) and read()[1] > time.time() + 3500
    assert first.release() and read() == (None, 0)  # free: no holder, until 0
    assert second.take() and not first.renew() and second.renew()
    with sqlite3.connect(path) as conn:  # another host's holder whose lease ran out
        conn.execute("UPDATE lease SET holder = ?, until = ?", (ANOTHER_HOST, time.time() - 1))
    assert first.take()
    assert miner(_dead_holder()).take(duration=timedelta(hours=1)) is False  # first holds it
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE lease SET holder = ?, until = ?", (_dead_holder(), time.time() + 3600))
    assert second.take()  # a process of this host that no longer runs: free at once
