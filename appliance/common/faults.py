"""Faults of the machine, not of the request: a full or failing disk, a database that cannot be
reached or stays locked. They are states that last (seconds to hours), not bugs, so they are
answered as Problems (507 for storage, 503 for an unreachable or busy database) instead of 500,
logged once a minute while they last instead of once per request with a traceback (a full disk
under load was 1,300 tracebacks in 40 s: issue 32), and counted for /metrics.

``classify`` names the fault behind an exception (following peewee's wrapping and Python's
exception chain); ``report`` counts it and logs it, throttled; ``problem`` is the answer.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Literal

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from appliance.common.problems import ApiError, Unavailable

log = logging.getLogger("appliance.faults")

Fault = Literal["disk_full", "disk_io", "database_unavailable", "database_busy"]
FAULTS: tuple[Fault, ...] = ("disk_full", "disk_io", "database_unavailable", "database_busy")

# One log line per fault kind per this many seconds while the fault lasts.
LOG_EVERY_SECONDS = 60.0

# A fault seen within this many seconds is "active" (the gauge, and the jobs' back-off).
ACTIVE_SECONDS = 60.0

_DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_DISK_IO_ERRNOS = {errno.EIO, errno.EROFS}
# SQLite's primary result codes (the extended code's low byte).
_SQLITE_FULL, _SQLITE_IOERR, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY = 13, 10, 5, 6, 8


class InsufficientStorage(ApiError):
    status, slug = 507, "insufficient-storage"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what peewee wrapped in it and its causes, each once."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)  # peewee keeps the driver's exception here
        todo.extend(
            [current.__cause__, current.__context__, orig if isinstance(orig, BaseException) else None]
        )


def _postgres_unreachable(exc: BaseException) -> bool:
    """psycopg2's OperationalError (the server went away, refused, restarting) and InterfaceError
    (a pooled connection already closed). Imported lazily: SQLite-only runs never load it."""
    try:
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        return False
    if isinstance(exc, psycopg2.InterfaceError):
        return True
    if not isinstance(exc, psycopg2.OperationalError):
        return False
    # Lock and statement timeouts are OperationalErrors too, but of a live server: SQLSTATE class 55/57
    # with a code; a lost connection has none (or 57P01..57P03: shutting down, cannot connect now).
    code = getattr(exc, "pgcode", None)
    return code is None or code in {"57P01", "57P02", "57P03", "08000", "08003", "08006", "08001"}


def classify(exc: BaseException) -> Fault | None:
    """The machine fault behind ``exc``, or None when it is something else (a bug: a 500)."""
    for item in _chain(exc):
        if isinstance(item, sqlite3.Error):
            code = (getattr(item, "sqlite_errorcode", None) or 0) & 0xFF
            text = str(item).lower()
            if code == _SQLITE_FULL or "database or disk is full" in text:
                return "disk_full"
            if code in {_SQLITE_IOERR, _SQLITE_READONLY} or "disk i/o error" in text:
                return "disk_io"
            if code in {_SQLITE_BUSY, _SQLITE_LOCKED} or "database is locked" in text:
                return "database_busy"
        elif isinstance(item, OSError) and item.errno is not None:
            if item.errno in _DISK_FULL_ERRNOS:
                return "disk_full"
            if item.errno in _DISK_IO_ERRNOS:
                return "disk_io"
        elif isinstance(item, WriteLockTimeout):
            return "database_busy"
        elif _postgres_unreachable(item):
            return "database_unavailable"
    return None


class WriteLockTimeout(Exception):
    """The cross-process SQLite write lock was not free within its bound (common/db.py): its
    holder is stopped (SIGSTOP, a debugger) or stuck."""


_DETAILS: dict[Fault, str] = {
    "disk_full": "The server's disk is full: nothing was saved. Try again once space is freed.",
    "disk_io": "The server cannot write to its disk: nothing was saved. Try again later.",
    "database_unavailable": "The database cannot be reached right now: nothing was saved. Try again shortly.",
    "database_busy": "The database is busy (another process holds it): nothing was saved. Try again shortly.",
}


def problem(fault: Fault) -> ApiError:
    """The answer to a request that met ``fault``: 507 for storage, 503 (with Retry-After) else."""
    if fault in {"disk_full", "disk_io"}:
        return InsufficientStorage(_DETAILS[fault], code=fault)
    return Unavailable(_DETAILS[fault], code=fault, headers={"Retry-After": "2"})


class _Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total: dict[Fault, int] = dict.fromkeys(FAULTS, 0)
        self.last_seen: dict[Fault, float] = {}
        self.last_logged: dict[Fault, float] = {}
        self.unlogged: dict[Fault, int] = dict.fromkeys(FAULTS, 0)


_counts = _Counts()


def report(fault: Fault, exc: BaseException, where: str) -> None:
    """Count ``fault`` and log it at most once per LOG_EVERY_SECONDS per kind (no traceback: the
    fault is the machine's, and its text says it), with how many went unlogged since."""
    now = time.monotonic()
    with _counts.lock:
        _counts.total[fault] += 1
        _counts.last_seen[fault] = now
        last = _counts.last_logged.get(fault)
        if last is not None and now - last < LOG_EVERY_SECONDS:
            _counts.unlogged[fault] += 1
            return
        _counts.last_logged[fault] = now
        unlogged, _counts.unlogged[fault] = _counts.unlogged[fault], 0
    log.error(
        "%s in %s: %s: %s (%d more since the last line; next line in %.0f s at the earliest)",
        fault,
        where,
        type(exc).__name__,
        exc,
        unlogged,
        LOG_EVERY_SECONDS,
        extra={"fault": fault},
    )


def log_failure(log: logging.Logger, exc: BaseException, where: str) -> None:
    """A background step failed: a machine fault (a full disk, a database away) is reported once a
    minute without a traceback; anything else is logged with its traceback, as a defect."""
    fault = classify(exc)
    if fault is not None:
        report(fault, exc, where)
    elif _lost_a_race(exc):
        # Two workers or nodes met on one row (a deadlock, a serialization failure, a unique key
        # taken first): the step is retried, and the constraint is what keeps it exactly once.
        log.warning("%s lost a race and is retried: %s", where, str(exc).splitlines()[0] if str(exc) else exc)
    else:
        log.error("%s failed", where, exc_info=exc)


# PostgreSQL's codes for a unique key taken first, a serialization failure and a deadlock.
_RACE_CODES = ("23505", "40001", "40P01")


def _lost_a_race(exc: BaseException) -> bool:
    """Two writers met on one row. Only a unique key taken first is a race: another broken
    constraint (NOT NULL, a foreign key, a CHECK) is a defect, logged with its traceback."""
    import sqlite3

    return any(
        getattr(e, "pgcode", None) in _RACE_CODES
        or (isinstance(e, sqlite3.IntegrityError) and str(e).startswith("UNIQUE constraint failed"))
        for e in _chain(exc)
    )


def active(fault: Fault | None = None) -> bool:
    """A fault (of any kind, or of ``fault``) was seen within ACTIVE_SECONDS."""
    now = time.monotonic()
    with _counts.lock:
        seen = [_counts.last_seen.get(fault)] if fault else list(_counts.last_seen.values())
    return any(at is not None and now - at < ACTIVE_SECONDS for at in seen)


def reset() -> None:
    """Forget every count (tests)."""
    global _counts
    _counts = _Counts()


class FaultCollector(Collector):
    """appliance_faults_total{fault} and appliance_fault_active{fault} for this process."""

    def collect(self) -> Iterator[Metric]:
        total = CounterMetricFamily(
            "appliance_faults", "Requests and jobs that met a machine fault, by kind.", labels=["fault"]
        )
        current = GaugeMetricFamily(
            "appliance_fault_active",
            "1 while a fault of this kind was seen in the last minute.",
            labels=["fault"],
        )
        with _counts.lock:
            totals = dict(_counts.total)
        for fault in FAULTS:
            total.add_metric([fault], totals[fault])
            current.add_metric([fault], 1 if active(fault) else 0)
        yield total
        yield current
