"""A single-holder lease: the one row that says which worker may run a job that one process of the
whole deployment runs at a time (the report projector, the treasury's reconciliation, a chain's
deposit cursor, housekeeping, an SMS provider's session, the embedded chain's miner, the sweeps).

Every serving process runs such a job's loop; each pass first tries ``take()``. The row names its
``holder`` (common/holders.py: host, pid, start time and, for ``instance_holder``, one worker of
the process) and ``until`` when the lease lasts. A worker may take the row when it is missing (it
creates it; a worker starting at the same moment may create it first, and then it is theirs), when
it holds it already (a renewal), when the lease has expired, or when the holder is a process of
this host that no longer runs (free at once: a restart after kill -9 does not wait for the expiry).
A lease held by anyone else is left alone. The read and the write are one write transaction with
the row locked (PostgreSQL) or the database's write lock held (SQLite), so two workers never both
take it.

Where the row is kept is a ``LeaseRow``: ``ModelRow`` for a peewee model whose row has ``holder``
and ``lease_until`` columns (both services' databases, SQLite or PostgreSQL), ``SqliteRow`` for a
``(name, holder, until REAL)`` table of a plain sqlite3 file (the embedded chain's miner).

Usage: the sweep job (appliance/engine/sweeps/job.py, ``_take_lease``: its row is
``TreasuryRun('sweep')``, renewed at most once per half lease, ``checked_at`` written when taken)::

    self.sweep_lease = SingletonLease.of(TreasuryRun, RUN, duration=lease)  # in __init__

    def _take_lease(self) -> bool:
        return self.sweep_lease.hold(
            create={"checked_at": None, "next_run_at": None, "last_error": None},
            checked_at=clock.now(),
        )

and ``self.sweep_lease.release(...)`` frees it at once (an unreleased lease expires).

``take(due=..., create=..., **fields)`` gates on the row's own fields (a job that runs once per
interval: ``due=lambda row, moment: row.next_run_at is None or row.next_run_at <= moment``), fills
the other columns of a row it creates, and writes ``fields`` beside the lease when it takes an
existing row. ``take_row`` returns the row itself (re-read after the write).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Protocol

import peewee

from appliance.common import clock
from appliance.common.compiled import insert_if_new
from appliance.common.db import locked, write_transaction
from appliance.common.holders import holder_gone, instance_holder

Due = Callable[[Any, Any], bool]  # (the row, the moment) -> whether the job may run now
Fields = Mapping[str, Any]


def held_by_another(holder: str | None, lease_until: Any, moment: Any, mine: str) -> bool:
    """A single-holder lease that ``mine`` may not take: another holder's unexpired lease, unless
    that holder is a process of this host that no longer runs (then it is free at once)."""
    return (
        holder not in (None, mine)
        and lease_until is not None
        and lease_until > moment
        and not holder_gone(holder)
    )


class LeaseRow(Protocol):
    """Where one lease is kept, and the clock its ``until`` is written in."""

    def write_transaction(self) -> Any:
        """A write transaction (a context manager) that ``read`` locks the row for."""

    def now(self) -> Any: ...

    def later(self, moment: Any, duration: timedelta) -> Any: ...

    def read(self) -> tuple[str | None, Any, Any] | None:
        """(holder, until, the row) inside ``write_transaction``, or None when there is no row."""

    def peek(self) -> tuple[str | None, Any] | None:
        """(holder, until) read without a transaction, or None."""

    def insert(self, holder: str, until: Any, fields: Fields) -> Any | None:
        """Create the row held by ``holder``; the row, or None when another created it first."""

    def write(self, fields: Fields, *, holder_is: str | None = None) -> int:
        """Write ``fields`` (``holder`` and ``until`` among them) to the row, only while ``holder_is``
        holds it when given; how many rows changed."""

    def reread(self) -> Any: ...


class ModelRow:
    """The lease in row ``key`` of a peewee ``model`` with ``holder`` and ``lease_until`` columns."""

    def __init__(self, model: type[peewee.Model], key: Any) -> None:
        self.model = model
        self.key = key
        self.primary = model._meta.primary_key  # type: ignore[attr-defined]

    def write_transaction(self) -> Any:
        return write_transaction(self.model._meta.database)  # type: ignore[attr-defined]

    def now(self) -> Any:
        return clock.now()

    def later(self, moment: Any, duration: timedelta) -> Any:
        return moment + duration

    def read(self) -> tuple[str | None, Any, Any] | None:
        row = locked(self.model.select().where(self.primary == self.key)).first()
        return None if row is None else (row.holder, row.lease_until, row)

    def peek(self) -> tuple[str | None, Any] | None:
        m = self.model
        row = m.select(m.holder, m.lease_until).where(self.primary == self.key).first()  # type: ignore[attr-defined]
        return None if row is None else (row.holder, row.lease_until)

    def insert(self, holder: str, until: Any, fields: Fields) -> Any | None:
        row = self.model(**{self.primary.name: self.key, "holder": holder, "lease_until": until, **fields})
        return row if insert_if_new(row) else None

    def write(self, fields: Fields, *, holder_is: str | None = None) -> int:
        changes = {("lease_until" if name == "until" else name): value for name, value in fields.items()}
        where = self.primary == self.key
        if holder_is is not None:
            where &= self.model.holder == holder_is  # type: ignore[attr-defined]
        return int(self.model.update(**changes).where(where).execute())

    def reread(self) -> Any:
        return self.model.get_by_id(self.key)


class SqliteRow:
    """The lease named ``name`` in ``table`` (name TEXT PRIMARY KEY, holder TEXT, until REAL NOT
    NULL: Unix seconds, 0 when free) of a sqlite3 file; ``begin`` is the file's write transaction
    (a context manager yielding the connection, BEGIN IMMEDIATE)."""

    def __init__(self, begin: Callable[[], Any], name: str, *, table: str = "lease") -> None:
        self.begin = begin
        self.name = name
        self.table = table
        self._local = threading.local()  # each thread's connection, inside its transaction

    @property
    def _conn(self) -> Any:
        return getattr(self._local, "conn", None)

    @contextmanager
    def write_transaction(self) -> Iterator[None]:
        with self.begin() as conn:
            outer, self._local.conn = self._conn, conn
            try:
                yield
            finally:
                self._local.conn = outer

    def now(self) -> float:
        return time.time()  # the file's own clock (Unix seconds), as its other readers use

    def later(self, moment: Any, duration: timedelta) -> float:
        return float(moment) + duration.total_seconds()

    def read(self) -> tuple[str | None, Any, Any] | None:
        row = self._conn.execute(
            f"SELECT holder, until FROM {self.table} WHERE name = ?", (self.name,)
        ).fetchone()
        return None if row is None else (row[0], row[1], row)

    def peek(self) -> tuple[str | None, Any] | None:
        with self.write_transaction():
            found = self.read()
        return None if found is None else found[:2]

    def insert(self, holder: str, until: Any, fields: Fields) -> Any | None:
        self._conn.execute(
            f"INSERT INTO {self.table} (name, holder, until) VALUES (?, ?, ?)", (self.name, holder, until)
        )
        return True

    def write(self, fields: Fields, *, holder_is: str | None = None) -> int:
        if self._conn is None:
            with self.write_transaction():
                return self.write(fields, holder_is=holder_is)
        values = {name: (0 if name == "until" and value is None else value) for name, value in fields.items()}
        sets = ", ".join(f"{name} = ?" for name in values)
        where, args = "name = ?", [*values.values(), self.name]
        if holder_is is not None:
            where, args = f"{where} AND holder = ?", [*args, holder_is]
        return int(self._conn.execute(f"UPDATE {self.table} SET {sets} WHERE {where}", args).rowcount)

    def reread(self) -> Any:
        return True


class SingletonLease:
    """The lease of one job, held for ``duration`` at a time by ``holder`` (by default one worker of
    this process: ``instance_holder()``). See the module's docstring."""

    def __init__(self, row: LeaseRow, duration: timedelta, *, holder: str | None = None) -> None:
        self.row = row
        self.duration = duration
        self.holder = holder or instance_holder()

    @classmethod
    def of(
        cls, model: type[peewee.Model], key: Any, *, duration: timedelta, holder: str | None = None
    ) -> SingletonLease:
        """The lease in row ``key`` of ``model`` (columns ``holder``, ``lease_until``)."""
        return cls(ModelRow(model, key), duration, holder=holder)

    def take(
        self,
        *,
        due: Due | None = None,
        create: Fields | Callable[[], Fields] | None = None,
        duration: timedelta | None = None,
        **fields: Any,
    ) -> bool:
        """Take (or renew) the lease for ``duration`` (the lease's own by default) when the row is
        free or ours and ``due`` (if given) says the job may run; True when it is ours now. A
        missing row is created with ``create``'s columns; an existing one gets ``fields`` too."""
        return self.take_row(due=due, create=create, duration=duration, **fields) is not None

    def take_row(
        self,
        *,
        due: Due | None = None,
        create: Fields | Callable[[], Fields] | None = None,
        duration: timedelta | None = None,
        **fields: Any,
    ) -> Any | None:
        """``take``, returning the row (as written) when taken, else None."""
        moment = self.row.now()
        until = self.row.later(moment, duration or self.duration)
        with self.row.write_transaction():
            found = self.row.read()
            if found is None:
                columns = create() if callable(create) else create
                return self.row.insert(self.holder, until, dict(columns or {}))
            holder, lease_until, current = found
            if due is not None and not due(current, moment):
                return None
            if held_by_another(holder, lease_until, moment, self.holder):
                return None
            self.row.write({"holder": self.holder, "until": until, **fields})
            return self.row.reread()

    def hold(self, *, create: Fields | Callable[[], Fields] | None = None, **fields: Any) -> bool:
        """Ours already with over half of the lease left: True without a write (a job that passes
        often renews once per half lease, not at every pass); else ``take(create=create,
        **fields)``."""
        seen = self.row.peek()
        holder, until = seen if seen is not None else (None, None)
        if (
            holder == self.holder
            and until is not None
            and until > self.row.later(self.row.now(), self.duration / 2)
        ):
            return True
        return self.take(create=create, **fields)

    def renew(self, **fields: Any) -> bool:
        """Extend the lease by its duration from now, while we hold it; False when we do not."""
        until = self.row.later(self.row.now(), self.duration)
        return self.row.write({"until": until, **fields}, holder_is=self.holder) == 1

    def release(self, **fields: Any) -> bool:
        """Free the lease at once (and write ``fields``), if we hold it; False when we do not."""
        return self.row.write({"holder": None, "until": None, **fields}, holder_is=self.holder) == 1
