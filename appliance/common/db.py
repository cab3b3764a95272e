"""Database connections for both services: SQLite by default, PostgreSQL by URL.

Each service owns a ``peewee.DatabaseProxy`` that its models bind to; ``bind_database`` makes the
real database and points the proxy at it. SQLite gets its pragmas in the order that matters
(busy_timeout first so that switching to WAL waits instead of failing). Writes that read before
they write go through ``write_transaction`` so that SQLite takes the write lock up front
(``BEGIN IMMEDIATE``) and PostgreSQL rows are locked with ``locked``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import peewee
from playhouse.pool import PooledPostgresqlDatabase, PooledSqliteDatabase

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
    pass


class _PostgresqlDatabase(_CommitCallbacks, PooledPostgresqlDatabase):
    pass


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


def make_database(url: str, *, busy_timeout_ms: int = 10000) -> peewee.Database:
    """Open (lazily) the database a URL names: sqlite:///PATH or postgresql://USER:PW@HOST:PORT/DB."""
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        path.parent.mkdir(parents=True, exist_ok=True)
        # Pooled so that a request reuses a connection (and its pragmas) instead of opening one.
        return _SqliteDatabase(
            str(path),
            max_connections=256,
            stale_timeout=600,
            pragmas=[
                ("busy_timeout", busy_timeout_ms),
                ("journal_mode", "wal"),
                ("synchronous", "normal"),
                ("foreign_keys", 1),
            ],
            timeout=busy_timeout_ms / 1000,
            check_same_thread=False,
        )
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


def bind_database(proxy: peewee.DatabaseProxy, url: str, *, busy_timeout_ms: int = 10000) -> peewee.Database:
    database = make_database(url, busy_timeout_ms=busy_timeout_ms)
    proxy.initialize(database)
    return database


def is_sqlite(database: peewee.Database | peewee.DatabaseProxy) -> bool:
    real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
    return isinstance(real, peewee.SqliteDatabase)


_WRITE_LOCKS: dict[str, threading.RLock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(database: peewee.Database) -> threading.RLock:
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(str(database.database), threading.RLock())


@contextlib.contextmanager
def write_transaction(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """A transaction that will write. On SQLite the write lock is taken at BEGIN (IMMEDIATE), so
    read-then-write sequences cannot interleave (no lost updates, no upgrade deadlocks), and the
    threads of one process queue on a lock first: a pool of one for writes, instead of spinning in
    SQLite's busy handler. PostgreSQL uses row locks (``locked``)."""
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
def connection(database: peewee.Database | peewee.DatabaseProxy) -> Iterator[None]:
    """Use a connection for a unit of work outside a request (CLI, workers, tests)."""
    opened = database.connect(reuse_if_open=True)
    try:
        yield
    finally:
        if opened and not database.is_closed():
            database.close()


class UTCDateTimeField(peewee.DateTimeField):
    """Aware UTC datetimes in Python; naive UTC in storage, always with microseconds on SQLite so
    that stored text sorts in time order."""

    def db_value(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return value
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        if is_sqlite(self.model._meta.database):
            # isoformat, not strftime: "%Y" writes year 1 as "1", which no longer parses or sorts.
            return value.isoformat(sep=" ", timespec="microseconds")
        return value

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
