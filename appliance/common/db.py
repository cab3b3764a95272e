"""Database connections for both services: SQLite by default, PostgreSQL by URL.

Each service owns a ``peewee.DatabaseProxy`` that its models bind to; ``bind_database`` makes the
real database and points the proxy at it. SQLite gets its pragmas in the order that matters
(busy_timeout first so that switching to WAL waits instead of failing). Writes that read before
they write go through ``write_transaction`` so that SQLite takes the write lock up front
(``BEGIN IMMEDIATE``) and PostgreSQL rows are locked with ``locked``.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import peewee
from playhouse.pool import PooledPostgresqlDatabase, PooledSqliteDatabase

from appliance.common import faults

_pending = threading.local()  # per thread: id(database) -> callbacks for its commit, before and after


class _CommitCallbacks:
    """Callbacks run just before the current transaction commits (still inside it: what must be
    written last) and once it has committed (what is told to other threads about a write must
    not reach them before they can read it); peewee has no such hooks. A rollback drops both."""

    def commit(self) -> Any:
        for callback in _take_pending(self, "before"):
            callback()  # a failure here fails the commit: the transaction rolls back
        result = super().commit()  # type: ignore[misc]
        for callback in _take_pending(self, "after"):
            try:
                callback()
            except Exception:  # the write is committed whatever a listener does
                logging.getLogger("appliance.db").exception("after-commit callback failed")
        return result

    def rollback(self) -> Any:
        _take_pending(self, "before")
        _take_pending(self, "after")
        return super().rollback()  # type: ignore[misc]


def _take_pending(database: object, when: str) -> list[Callable[[], None]]:
    lists = getattr(_pending, when, None)
    return lists.pop(id(database), []) if lists else []


def _add_pending(database: peewee.Database, when: str, callback: Callable[[], None]) -> None:
    if not hasattr(_pending, when):
        setattr(_pending, when, {})
    getattr(_pending, when).setdefault(id(database), []).append(callback)


class _SqliteDatabase(_CommitCallbacks, PooledSqliteDatabase):
    write_lock_seconds = 10.0


class _PostgresqlDatabase(_CommitCallbacks, PooledPostgresqlDatabase):
    """Pooled connections that heal (issue 32). A pooled connection whose server restarted or
    dropped it is found out only when used: its first statement fails ("server closed the
    connection unexpectedly", "connection already closed"). When that first statement is a BEGIN
    or a read outside a transaction, nothing of the request has reached the server: the dead
    connection is thrown away (never back to the pool) and the statement runs once more on a new
    one. Anything else (a connection lost after the transaction wrote, a second failure) raises,
    and the request is answered 503 (common/faults.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._untried = threading.local()  # the connection this thread checked out, until it works

    def _connect(self) -> Any:
        conn = super()._connect()
        self._untried.conn = conn
        return conn

    def _healing[T](self, run: Callable[[], T], *, safe: bool) -> T:
        try:
            result = run()
        except (peewee.OperationalError, peewee.InterfaceError) as exc:
            untried = getattr(self._untried, "conn", None)
            if not (
                safe
                and untried is not None
                and untried is self._state.conn
                and faults.classify(exc) == "database_unavailable"
            ):
                raise
            logging.getLogger("appliance.db").info("a pooled connection was dead (%s): reconnecting", exc)
            self._untried.conn = None
            with contextlib.suppress(Exception):
                self.manual_close()
            result = run()
        self._untried.conn = None
        return result

    def begin(self, *args: Any, **kwargs: Any) -> None:
        self._healing(lambda: super(_PostgresqlDatabase, self).begin(*args, **kwargs), safe=True)

    def execute_sql(self, sql: str, params: Any = None, commit: Any = None) -> Any:
        safe = not self.in_transaction() and sql.lstrip()[:6].upper() == "SELECT"
        return self._healing(lambda: super(_PostgresqlDatabase, self).execute_sql(sql, params), safe=safe)


def after_commit(database: peewee.Database | peewee.DatabaseProxy, callback: Callable[[], None]) -> None:
    """Run ``callback`` once this thread's transaction on ``database`` commits (at once outside
    a transaction: the write is already committed); never when it rolls back."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    if not real.in_transaction():
        callback()
        return
    _add_pending(real, "after", callback)


def before_commit(database: peewee.Database | peewee.DatabaseProxy, callback: Callable[[], None]) -> None:
    """Run ``callback`` inside this thread's transaction on ``database`` just before it commits
    (at once outside a transaction); never when it rolls back. It may write; if it fails, the
    transaction rolls back."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    if not real.in_transaction():
        callback()
        return
    _add_pending(real, "before", callback)


# SQLite copies the write-ahead log back into the database (and syncs both) inside the commit
# that takes the log past wal_autocheckpoint pages, holding the write lock all the while: every
# hundredth payout paid for the ninety-nine before it. A serving process checkpoints in the
# background instead (``run_checkpoints``), and its connections keep only a far threshold as a
# backstop for when that worker is not running.
AUTOCHECKPOINT_PAGES = 1000  # SQLite's default
BACKSTOP_CHECKPOINT_PAGES = 20000  # about 80 MB of log


def make_database(
    url: str, *, busy_timeout_ms: int = 10000, background_checkpoints: bool = False
) -> peewee.Database:
    """Open (lazily) the database a URL names: sqlite:///PATH or postgresql://USER:PW@HOST:PORT/DB.
    ``background_checkpoints``: commits leave the log's checkpoints to ``run_checkpoints``."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        # Pooled so that a request reuses a connection (and its pragmas) instead of opening one.
        sqlite = _SqliteDatabase(
            str(path),
            max_connections=256,
            stale_timeout=600,
            pragmas=[
                ("busy_timeout", busy_timeout_ms),
                ("journal_mode", "wal"),
                ("synchronous", "normal"),
                ("foreign_keys", 1),
                (
                    "wal_autocheckpoint",
                    BACKSTOP_CHECKPOINT_PAGES if background_checkpoints else AUTOCHECKPOINT_PAGES,
                ),
            ],
            timeout=busy_timeout_ms / 1000,
            check_same_thread=False,
        )
        # The cross-process write lock (write_transaction) waits as long as SQLite's busy handler.
        sqlite.write_lock_seconds = busy_timeout_ms / 1000
        return sqlite
    parsed = urlparse(url)
    if parsed.scheme not in {"postgresql", "postgres"}:
        raise ValueError(f"unsupported database URL scheme: {parsed.scheme}")
    return _PostgresqlDatabase(
        unquote(parsed.path.lstrip("/")),
        user=unquote(parsed.username or "") or None,
        password=unquote(parsed.password or "") or None,
        host=parsed.hostname or None,
        port=parsed.port or None,
        max_connections=64,
        stale_timeout=300,
    )


def bind_database(
    proxy: peewee.DatabaseProxy,
    url: str,
    *,
    busy_timeout_ms: int = 10000,
    background_checkpoints: bool = False,
) -> peewee.Database:
    database = make_database(
        url, busy_timeout_ms=busy_timeout_ms, background_checkpoints=background_checkpoints
    )
    proxy.initialize(database)
    return database


def checkpoint_workers(
    database: peewee.DatabaseProxy, interval: float
) -> list[tuple[str, Callable[[threading.Event], None]]]:
    """The background checkpoint worker of a service's SQLite database (none on PostgreSQL, or
    when ``interval`` is 0: SQLite's own checkpoints then)."""
    if interval <= 0 or not is_sqlite(database):
        return []
    return [("checkpoint", lambda stop: run_checkpoints(database, stop, interval=interval))]


def run_checkpoints(database: peewee.DatabaseProxy, stop: threading.Event, *, interval: float) -> None:
    """Checkpoint the SQLite write-ahead log every ``interval`` seconds until ``stop`` (a serving
    process's worker). PASSIVE: it copies what no reader still needs and never waits for, nor
    blocks, a writer; a page written many times since the last pass is copied once."""
    while not stop.wait(interval):
        try:
            with database.connection_context():
                database.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except peewee.OperationalError as exc:  # busy or locked: the next pass copies it
            fault = faults.classify(exc)
            if fault in {"disk_full", "disk_io"}:  # once a minute while it lasts, not every pass
                faults.report(fault, exc, "the checkpoint worker")
            else:
                logging.getLogger("appliance.db").warning("checkpoint skipped: %s", exc)


def is_sqlite(database: peewee.Database | peewee.DatabaseProxy) -> bool:
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    return isinstance(real, peewee.SqliteDatabase)


class _WriteLock:
    """One writer at a time on a SQLite database, handed over at once: the threads of a process
    queue on a reentrant lock, and serving processes on an exclusive flock of a file beside the
    database, which the kernel gives to the next process the moment it is released. Without it,
    a process that found the write lock taken would sleep in SQLite's busy handler (1, 2, 5, 10 …
    100 ms between tries), and with several serving processes most writes waited there.

    The wait is bounded (``timeout``, the busy timeout): a holder that stops (SIGSTOP, a debugger,
    a long pause) would otherwise stall every writer of every process for as long as it is
    stopped (issue 32: 20 s). Past the bound the writer gets WriteLockTimeout (a 503). flock has
    no timeout, so a contended wait blocks in a helper thread on a descriptor of its own (an flock
    belongs to its open file description): the writer waits for it with a timeout, and a helper
    whose writer gave up releases the lock as soon as it gets it."""

    def __init__(self, path: str, timeout: float) -> None:
        self._path = f"{path}-writer.lock"
        self.timeout = timeout
        self._threads = threading.RLock()
        self._depth = 0
        self._fd: int | None = None  # kept open: the uncontended path takes the lock on it
        self._held: int | None = None  # the descriptor holding the flock now

    def _open(self) -> int:
        return os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def __enter__(self) -> None:
        if not self._threads.acquire(timeout=self.timeout):
            raise faults.WriteLockTimeout(f"no write lock within {self.timeout:g} s (another thread)")
        try:
            if self._depth == 0:
                self._held = self._take()
        except BaseException:
            self._threads.release()
            raise
        self._depth += 1

    def _take(self) -> int:
        if self._fd is None:
            self._fd = self._open()
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return self._fd
        except BlockingIOError:
            pass
        # Another process holds it: wait on a descriptor of our own, in a thread, with a bound.
        fd = self._open()
        got = threading.Event()
        state = {"abandoned": False}
        guard = threading.Lock()

        def wait() -> None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with guard:
                if not state["abandoned"]:
                    got.set()
                    return
            fcntl.flock(fd, fcntl.LOCK_UN)  # the writer gave up: hand it on at once
            os.close(fd)

        threading.Thread(target=wait, name="write-lock-wait", daemon=True).start()
        if not got.wait(self.timeout):
            with guard:
                if not got.is_set():
                    state["abandoned"] = True
                    raise faults.WriteLockTimeout(
                        f"no write lock within {self.timeout:g} s: another process holds it"
                    )
        return fd

    @contextlib.contextmanager
    def patiently(self) -> Iterator[None]:
        """Hold the lock, waiting for it as long as it takes, in this thread: the kernel wakes the
        thread itself the moment the lock is released (no helper thread to hand it over). For a
        thread whose callers bound their own waits (the group commit's writer)."""
        self._threads.acquire()
        try:
            if self._depth == 0:
                if self._fd is None:
                    self._fd = self._open()
                fcntl.flock(self._fd, fcntl.LOCK_EX)
                self._held = self._fd
        except BaseException:
            self._threads.release()
            raise
        self._depth += 1
        try:
            yield
        finally:
            self.__exit__()

    def __exit__(self, *_exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._held is not None:
                held, self._held = self._held, None
                fcntl.flock(held, fcntl.LOCK_UN)
                if held != self._fd:
                    os.close(held)
        finally:
            self._threads.release()

    def forget(self) -> None:
        """In a forked child: the descriptor is the parent's (an flock on it would be shared)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._held = None


_WRITE_LOCKS: dict[str, _WriteLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


# A process serves two or three databases; one that opens many in turn (a test run, a tool
# restoring copies) must not keep a lock file open for each: idle locks beyond this are closed.
_WRITE_LOCKS_KEPT = 8


def _write_lock(database: peewee.Database) -> _WriteLock:
    with _WRITE_LOCKS_GUARD:
        path = str(database.database)
        lock = _WRITE_LOCKS.get(path)
        if lock is None:
            if len(_WRITE_LOCKS) >= _WRITE_LOCKS_KEPT:
                _close_idle_write_locks()
            lock = _WRITE_LOCKS[path] = _WriteLock(path, getattr(database, "write_lock_seconds", 10.0))
        return lock


def _close_idle_write_locks() -> None:
    """Close the lock files of databases no thread is writing to now (oldest first); a lock in use
    stays. Called with _WRITE_LOCKS_GUARD held; a closed lock is made again when next needed."""
    for path, lock in list(_WRITE_LOCKS.items()):
        if len(_WRITE_LOCKS) < _WRITE_LOCKS_KEPT:
            return
        if not lock._threads.acquire(blocking=False):
            continue
        try:
            if lock._depth == 0:
                lock.forget()
                del _WRITE_LOCKS[path]
        finally:
            lock._threads.release()


def _after_fork_in_child() -> None:
    global _WRITE_LOCKS_GUARD
    for lock in _WRITE_LOCKS.values():
        lock.forget()
    _WRITE_LOCKS.clear()
    _WRITE_LOCKS_GUARD = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def patient_write_transaction(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """``write_transaction`` for a thread that waits for SQLite's write lock as long as it takes
    (``_WriteLock.patiently``); its callers bound their waits themselves (common/group_commit.py)."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    if isinstance(real, peewee.SqliteDatabase):
        with _write_lock(real).patiently(), database.atomic("IMMEDIATE"):
            yield
    else:
        with database.atomic():
            yield


@contextlib.contextmanager
def patient_write_lock(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """SQLite's write lock held across several ``patient_write_transaction``s of this thread (a
    batch that is rolled back and run again keeps its turn); nothing on PostgreSQL."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    if isinstance(real, peewee.SqliteDatabase):
        with _write_lock(real).patiently():
            yield
    else:
        yield


def write_lock_bound(database: peewee.Database | peewee.DatabaseProxy) -> float | None:
    """How long a writer waits for SQLite's write lock (None: PostgreSQL, which has row locks)."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    return getattr(real, "write_lock_seconds", 10.0) if isinstance(real, peewee.SqliteDatabase) else None


@contextlib.contextmanager
def write_transaction(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """A transaction that will write. On SQLite the write lock is taken at BEGIN (IMMEDIATE), so
    read-then-write sequences cannot interleave (no lost updates, no upgrade deadlocks), and
    writers queue first (threads on a lock, processes on an flock: ``_WriteLock``), a pool of one
    for writes, instead of sleeping in SQLite's busy handler. PostgreSQL uses row locks
    (``locked``)."""
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    if isinstance(real, peewee.SqliteDatabase):
        with _write_lock(real), database.atomic("IMMEDIATE"):
            yield
    else:
        with database.atomic():
            yield


def locked(query: peewee.SelectQuery) -> peewee.SelectQuery:
    """Lock the selected rows until the transaction ends (PostgreSQL); SQLite's immediate
    transaction already serialises writers."""
    database = query.model._meta.database
    if is_sqlite(database):
        return query
    return query.for_update()


def lock_row(model: type[peewee.Model], key: Any) -> None:
    """Hold ``model``'s row ``key`` until the transaction ends, so that the writers of one thing
    (one courier's batches or handovers) take turns and each sees what the one before committed
    (PostgreSQL, where a blocked statement would otherwise go on with the snapshot it started
    from); SQLite's immediate transaction already serialises every writer. The text is written
    directly: it is on the GPS batch's hot path."""
    database = model._meta.database  # type: ignore[attr-defined]
    if is_sqlite(database):
        return
    table, column = model._meta.table_name, model._meta.primary_key.column_name  # type: ignore[attr-defined]
    quote = database.quote
    database.execute_sql(
        f"SELECT 1 FROM {quote[0]}{table}{quote[1]} WHERE {quote[0]}{column}{quote[1]} = {database.param}"
        " FOR UPDATE",
        (key,),
    )


def retry_locked[T](fn: Callable[[], T], *, attempts: int = 5, pause: float = 0.05) -> T:
    """Run ``fn`` again when SQLite reports the database locked past its busy timeout."""
    for attempt in range(attempts):
        try:
            return fn()
        except peewee.OperationalError as exc:
            if "locked" not in str(exc).lower() or attempt == attempts - 1:
                raise
            time.sleep(pause * (2**attempt))
    raise AssertionError("unreachable")


@contextlib.contextmanager
def savepoint(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """A savepoint inside the caller's transaction, so that one failed statement (a unique index
    refusing a row) undoes only its part and leaves the transaction usable (PostgreSQL aborts the
    whole transaction on any failed statement otherwise). Refused outside a transaction, where
    peewee's atomic() would begin a deferred transaction of its own (docs/development.md)."""
    if not database.in_transaction():
        raise RuntimeError("savepoint() is for use inside write_transaction()")
    with database.atomic():
        yield


@contextlib.contextmanager
def connection(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """Use a connection for a unit of work outside a request (CLI, workers, tests)."""
    opened = database.connect(reuse_if_open=True)
    try:
        yield
    finally:
        if opened and not database.is_closed():
            database.close()


def stored_utc(value: datetime, *, sqlite: bool) -> Any:
    """What UTCDateTimeField stores for ``value``: naive UTC, as text with microseconds on SQLite
    (for a caller converting many at once, the database's kind worked out once)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    # isoformat, not strftime: "%Y" writes year 1 as "1", which no longer parses or sorts.
    return value.isoformat(sep=" ", timespec="microseconds") if sqlite else value


class UTCDateTimeField(peewee.DateTimeField):
    """Aware UTC datetimes in Python; naive UTC in storage, always with microseconds on SQLite so
    that stored text sorts in time order."""

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        return stored_utc(value, sqlite=is_sqlite(self.model._meta.database))

    def python_value(self, value: Any) -> Any:
        if isinstance(value, str):
            # Fast path (listing thousands of rows): SQLite stores the text this field wrote.
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                parsed = super().python_value(value)
            value = parsed
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value
