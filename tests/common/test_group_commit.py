"""Group commit: writes submitted together share one transaction, each answered only once it is
committed, a failing one undone alone, on SQLite and on PostgreSQL."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import peewee
import pytest

from appliance.common.db import before_commit, make_database
from appliance.common.faults import WriteLockTimeout
from appliance.common.group_commit import GroupCommit
from tests.conftest import empty_postgres

proxy = peewee.DatabaseProxy()


class Entry(peewee.Model):
    name = peewee.CharField(unique=True)

    class Meta:
        database = proxy


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path):
    db = make_database(f"sqlite:///{tmp_path / 'g.db'}") if request.param == "sqlite" else empty_postgres()
    proxy.initialize(db)
    with db.connection_context():
        db.create_tables([Entry])
    yield db
    with db.connection_context():
        db.drop_tables([Entry])
    db.close_all()


def _stored() -> list[str]:
    with proxy.connection_context():
        return sorted(e.name for e in Entry.select())


def _insert(name: str):
    def work() -> str:
        Entry.create(name=name)
        return name

    return work


def _submit_in_threads(group: GroupCommit, works: list) -> tuple[list[threading.Thread], dict]:
    results: dict = {}

    def submit(index: int, work) -> None:
        with proxy.connection_context():
            try:
                results[index] = group.run(work)
            except Exception as error:
                results[index] = error

    threads = [threading.Thread(target=submit, args=(i, w)) for i, w in enumerate(works)]
    for thread in threads:
        thread.start()
    return threads, results


def _until(condition, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.005)


def test_writes_queued_while_a_batch_runs_are_committed_together_in_the_next(database) -> None:
    group = GroupCommit(proxy)
    release = threading.Event()

    def first() -> str:
        release.wait(10)
        Entry.create(name="first")
        return "first"

    leader, leader_result = _submit_in_threads(group, [first])
    _until(lambda: group._running)
    followers, results = _submit_in_threads(group, [_insert(f"n{i}") for i in range(5)])
    _until(lambda: len(group._queue) == 5)
    assert _stored() == []  # nothing is visible before its batch commits
    release.set()
    for thread in leader + followers:
        thread.join(10)
    assert leader_result == {0: "first"}
    assert results == {i: f"n{i}" for i in range(5)}
    assert group.batches == 2  # the leader's alone, then the five queued behind it in one
    assert _stored() == ["first", "n0", "n1", "n2", "n3", "n4"]


def test_a_write_that_fails_in_a_batch_is_undone_alone_and_fails_in_its_own_caller(database) -> None:
    group = GroupCommit(proxy)
    release = threading.Event()

    def blocker() -> str:
        release.wait(10)
        return "blocker"

    def half_then_fail() -> str:
        Entry.create(name="half")
        raise ValueError("refused after a write")

    leader, _ = _submit_in_threads(group, [blocker])
    _until(lambda: group._running)
    threads, results = _submit_in_threads(group, [_insert("a"), half_then_fail, _insert("b")])
    _until(lambda: len(group._queue) == 3)
    release.set()
    for thread in leader + threads:
        thread.join(10)
    assert results[0] == "a" and results[2] == "b"
    assert isinstance(results[1], ValueError)
    assert group.batches == 2
    assert _stored() == ["a", "b"]


def test_the_writes_before_a_failing_one_run_again_in_a_new_transaction_and_commit_once(database) -> None:
    group = GroupCommit(proxy)
    release = threading.Event()
    runs: dict[str, int] = {"a": 0, "b": 0}

    def blocker() -> str:
        release.wait(10)
        return "blocker"

    def counted(name: str):
        def work() -> str:
            runs[name] += 1
            Entry.create(name=name)
            return name

        return work

    def fail() -> str:
        raise ValueError("refused")

    leader, _ = _submit_in_threads(group, [blocker])
    _until(lambda: group._running)
    threads, results = _submit_in_threads(group, [counted("a")])
    _until(lambda: len(group._queue) == 1)
    more, more_results = _submit_in_threads(group, [fail])
    _until(lambda: len(group._queue) == 2)
    last, last_results = _submit_in_threads(group, [counted("b")])
    _until(lambda: len(group._queue) == 3)
    release.set()
    for thread in leader + threads + more + last:
        thread.join(10)
    assert results == {0: "a"} and last_results == {0: "b"}
    assert isinstance(more_results[0], ValueError)
    # "a" ran, was rolled back with the failure, and ran again; "b" never ran before the failure.
    assert runs == {"a": 2, "b": 1}
    assert _stored() == ["a", "b"]


def test_a_batch_whose_commit_fails_fails_every_write_in_it(database) -> None:
    group = GroupCommit(proxy)
    release = threading.Event()

    def blocker() -> None:
        release.wait(10)

    def poisons_the_commit() -> str:
        Entry.create(name="poison")

        def fail() -> None:
            raise RuntimeError("the commit failed")

        before_commit(proxy, fail)
        return "poison"

    leader, _ = _submit_in_threads(group, [blocker])
    _until(lambda: group._running)
    threads, results = _submit_in_threads(group, [_insert("c"), poisons_the_commit])
    _until(lambda: len(group._queue) == 2)
    release.set()
    for thread in leader + threads:
        thread.join(10)
    assert all(isinstance(result, RuntimeError) for result in results.values())
    assert _stored() == []


def test_a_write_alone_is_committed_before_its_caller_is_answered(database) -> None:
    group = GroupCommit(proxy)
    with proxy.connection_context():
        assert group.run(_insert("alone")) == "alone"
        with pytest.raises(peewee.IntegrityError):
            group.run(_insert("alone"))  # a batch of one fails as a plain transaction would
    assert _stored() == ["alone"]
    assert group.batches == 2


def _hold_the_write_lock(database) -> int:
    """Take SQLite's cross-process write lock as another serving process would (its own open of
    the lock file beside the database)."""
    fd = os.open(f"{database.database}-writer.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _let_go(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def test_writes_queued_while_another_process_holds_the_lock_are_committed_in_one_batch(tmp_path) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'g.db'}")
    proxy.initialize(db)
    with db.connection_context():
        db.create_tables([Entry])
    group = GroupCommit(proxy)
    held = _hold_the_write_lock(db)
    threads, results = _submit_in_threads(group, [_insert(f"w{i}") for i in range(5)])
    _until(lambda: len(group._queue) == 5)
    time.sleep(0.05)  # the writer is waiting for the lock, not yet holding it
    assert group.batches == 0
    _let_go(held)
    for thread in threads:
        thread.join(10)
    assert results == {i: f"w{i}" for i in range(5)}
    assert group.batches == 1
    assert _stored() == [f"w{i}" for i in range(5)]
    db.close_all()


def test_a_write_waiting_past_the_lock_bound_is_withdrawn_with_a_timeout_and_never_runs(tmp_path) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'g.db'}", busy_timeout_ms=300)
    proxy.initialize(db)
    with db.connection_context():
        db.create_tables([Entry])
    group = GroupCommit(proxy)
    held = _hold_the_write_lock(db)  # a stopped process holding it
    started = time.monotonic()
    with proxy.connection_context(), pytest.raises(WriteLockTimeout):
        group.run(_insert("late"))
    assert 0.25 < time.monotonic() - started < 5
    _let_go(held)
    with proxy.connection_context():
        assert group.run(_insert("next")) == "next"  # the writer goes on once the lock is free
    assert _stored() == ["next"]
    db.close_all()
