"""The database layer on both backends: transactions, row locks, UTC times, append-only tables;
SQLite's write-ahead log checkpointed in the background by a serving process."""

import os
import select
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import peewee
import pytest

from appliance.common import db as db_module
from appliance.common.db import (
    BACKSTOP_CHECKPOINT_PAGES,
    UTCDateTimeField,
    checkpoint_workers,
    locked,
    make_database,
    write_transaction,
)
from migrations.support import forbid_changes
from tests.conftest import empty_postgres

BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path):
    db = make_database(f"sqlite:///{tmp_path / 'b.db'}") if request.param == "sqlite" else empty_postgres()
    proxy = peewee.DatabaseProxy()
    proxy.initialize(db)

    class Counter(peewee.Model):
        value = peewee.IntegerField(default=0)
        at = UTCDateTimeField(null=True)

        class Meta:
            database = proxy

    class Journal(peewee.Model):
        text = peewee.CharField()

        class Meta:
            database = proxy

    with db.connection_context():
        db.create_tables([Counter, Journal])
        forbid_changes(db, "journal")
    yield proxy, Counter, Journal
    if not db.is_closed():
        db.close()


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_concurrent_read_then_write_transactions_lose_no_update(database) -> None:
    proxy, counter_model, _ = database
    with proxy.connection_context():
        row = counter_model.create(value=0)

    def bump() -> None:
        for _ in range(20):
            with proxy.connection_context(), write_transaction(proxy):
                current = locked(counter_model.select().where(counter_model.id == row.id)).get()
                counter_model.update(value=current.value + 1).where(counter_model.id == row.id).execute()

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with proxy.connection_context():
        assert counter_model.get_by_id(row.id).value == 80


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_times_come_back_as_the_same_aware_utc_instant(database) -> None:
    proxy, counter_model, _ = database
    moment = datetime(2026, 11, 22, 20, 59, 59, 123456, tzinfo=UTC)
    with proxy.connection_context():
        row = counter_model.create(at=moment)
        assert counter_model.get_by_id(row.id).at == moment


@pytest.mark.parametrize("database", BACKENDS, indirect=True)
def test_an_append_only_table_refuses_update_and_delete(database) -> None:
    proxy, _, journal_model = database
    with proxy.connection_context():
        entry = journal_model.create(text="first")
        with pytest.raises(peewee.DatabaseError), proxy.atomic():
            journal_model.update(text="changed").where(journal_model.id == entry.id).execute()
        with pytest.raises(peewee.DatabaseError), proxy.atomic():
            journal_model.delete().where(journal_model.id == entry.id).execute()
        assert journal_model.get_by_id(entry.id).text == "first"


def _pages_table(db: peewee.Database) -> None:
    with db.connection_context():
        db.execute_sql("CREATE TABLE page_filler (id INTEGER PRIMARY KEY, text TEXT)")


def _fill(db: peewee.Database, rows: int) -> None:
    with db.connection_context(), write_transaction(db):
        for _ in range(rows):
            db.execute_sql("INSERT INTO page_filler (text) VALUES (?)", ("x" * 400,))


def test_a_serving_database_leaves_its_checkpoints_to_the_background_worker(tmp_path: Path) -> None:
    served = make_database(f"sqlite:///{tmp_path / 'served.db'}", background_checkpoints=True)
    plain = make_database(f"sqlite:///{tmp_path / 'plain.db'}")
    with served.connection_context():
        assert served.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == BACKSTOP_CHECKPOINT_PAGES
    with plain.connection_context():
        assert plain.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    # About 1,300 pages: past SQLite's own threshold, far from the backstop.
    path = tmp_path / "served.db"
    _pages_table(served)
    size_before = path.stat().st_size
    _fill(served, 12000)
    assert path.stat().st_size == size_before, "no commit copied the log into the database"

    proxy = peewee.DatabaseProxy()
    proxy.initialize(served)
    [(name, worker)] = checkpoint_workers(proxy, 0.05)
    stop = threading.Event()
    thread = threading.Thread(target=worker, args=(stop,))
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while path.stat().st_size == size_before and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join()
    assert name == "checkpoint"
    assert path.stat().st_size > size_before + 1000 * 4096
    served.close_all()
    plain.close_all()


def test_without_a_checkpoint_interval_sqlite_checkpoints_by_itself_and_no_worker_runs(
    tmp_path: Path,
) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'own.db'}", background_checkpoints=False)
    proxy = peewee.DatabaseProxy()
    proxy.initialize(db)
    assert checkpoint_workers(proxy, 0) == []
    _pages_table(db)
    size_before = (tmp_path / "own.db").stat().st_size
    _fill(db, 12000)
    assert (tmp_path / "own.db").stat().st_size > size_before
    db.close_all()


@pytest.mark.postgres
def test_postgresql_needs_no_checkpoint_worker() -> None:
    proxy = peewee.DatabaseProxy()
    proxy.initialize(empty_postgres())
    assert checkpoint_workers(proxy, 1.0) == []


_TRY_THE_WRITER_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("taken")
"""


def _writer_lock_seen_from_another_process(lock_path: Path) -> str:
    return subprocess.run(
        [sys.executable, "-c", _TRY_THE_WRITER_LOCK, str(lock_path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_sqlite_writer_holds_a_lock_that_other_processes_queue_on_until_it_commits(tmp_path: Path) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'w.db'}")
    _pages_table(db)
    lock_path = tmp_path / "w.db-writer.lock"
    with db.connection_context():
        with write_transaction(db):
            with write_transaction(db):  # nested: a savepoint, the lock still held after it
                db.execute_sql("INSERT INTO page_filler (text) VALUES ('a')")
            assert _writer_lock_seen_from_another_process(lock_path) == "taken"
        assert _writer_lock_seen_from_another_process(lock_path) == "free"
    db.close_all()


def test_a_process_writing_to_many_databases_in_turn_keeps_few_lock_files_open(tmp_path: Path) -> None:
    """A test run or a tool opening database after database kept one lock file open for each, until
    the process ran past 1,024 descriptors (and select() refused them)."""

    def open_lock_files() -> int:
        return sum("-writer.lock" in os.readlink(f"/proc/self/fd/{fd}") for fd in _fds())

    before = open_lock_files()
    for n in range(40):
        db = make_database(f"sqlite:///{tmp_path / f'many{n}.db'}")
        _pages_table(db)
        with db.connection_context(), write_transaction(db):
            db.execute_sql("INSERT INTO page_filler (text) VALUES ('a')")
        db.close_all()
    assert open_lock_files() - before <= db_module._WRITE_LOCKS_KEPT


def _fds() -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        found.append(fd)
    return found


def test_a_forked_serving_process_takes_the_writer_lock_with_its_own_descriptor(tmp_path: Path) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'f.db'}")
    _pages_table(db)
    _fill(db, 1)  # the parent has used (and opened) its lock before forking
    lock_path = tmp_path / "f.db-writer.lock"
    read_end, write_end = os.pipe()
    with db.connection_context(), write_transaction(db):
        pid = os.fork()
        if pid == 0:  # the child: the parent holds the lock, so the child must not
            try:
                os.close(read_end)
                proxy_lock = db_module._write_lock(db)
                with proxy_lock:  # its own descriptor: this waits until the parent lets go
                    os.write(write_end, b"acquired")
            finally:
                os._exit(0)
        os.close(write_end)
        readable, _, _ = select.select([read_end], [], [], 0.5)
        assert readable == [], "the child wrote while the parent held the lock"
        assert _writer_lock_seen_from_another_process(lock_path) == "taken"
    assert os.read(read_end, 16) == b"acquired"  # once the parent's transaction ended
    os.waitpid(pid, 0)
    os.close(read_end)
    db.close_all()


def test_processes_writing_one_sqlite_database_at_once_lose_no_update(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    db = make_database(f"sqlite:///{path}")
    with db.connection_context():
        db.execute_sql("CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER)")
        db.execute_sql("INSERT INTO counter (id, value) VALUES (1, 0)")
    script = """
import sys
from appliance.common.db import make_database, write_transaction
db = make_database("sqlite:///" + sys.argv[1])
with db.connection_context():
    for _ in range(150):
        with write_transaction(db):
            value = db.execute_sql("SELECT value FROM counter WHERE id = 1").fetchone()[0]
            db.execute_sql("UPDATE counter SET value = ? WHERE id = 1", (value + 1,))
"""
    children = [subprocess.Popen([sys.executable, "-c", script, str(path)]) for _ in range(3)]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0]
    with db.connection_context():
        assert db.execute_sql("SELECT value FROM counter WHERE id = 1").fetchone()[0] == 450
    db.close_all()
