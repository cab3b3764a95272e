"""Background work as rows claimed with a lease, for every worker of both services.

A row is due when its ``next_attempt_at`` has come and nobody holds an unexpired lease on it.
``claim`` takes a batch of due rows in one short write transaction (``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, so several processes split the work instead of queueing behind each other; SQLite's
immediate transaction serialises claimers), stamping each with a lease and its holder
(``lease_holder``: the process, common/holders.py). A worker that dies keeps nothing: its leases
expire and the rows are claimed again, at once when the dead holder was a process of this host
(a restart after kill -9 takes over without waiting). ``retry_later`` counts the attempt and
backs off exponentially with jitter, and every failure is logged with the attempt number, so work
is never retried forever in silence.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import peewee

from appliance.common import clock, faults
from appliance.common.db import is_sqlite, write_transaction
from appliance.common.holders import holder_gone, host_prefix, process_holder

log = logging.getLogger("appliance.jobs")


def backoff(attempts: int, *, base: float = 2.0, cap: float = 1800.0) -> timedelta:
    """base·2^attempts seconds, capped, with ±25 % jitter so that retries of many rows spread out."""
    seconds = min(cap, base * 2 ** min(attempts, 30))
    return timedelta(seconds=seconds * random.uniform(0.75, 1.25))


class LeasedQueue:
    """Rows of ``model`` (columns ``lease_until``, ``lease_holder``, ``next_attempt_at`` and an
    attempts counter) that match ``pending`` are work."""

    def __init__(
        self,
        model: type[peewee.Model],
        database: peewee.DatabaseProxy,
        *,
        pending: Callable[[], Any],
        lease: timedelta,
        attempts_field: str = "attempts",
        error_field: str | None = None,
        backoff_base: float = 2.0,
        backoff_cap: float = 1800.0,
    ) -> None:
        self.model = model
        self.database = database
        self.pending = pending
        self.lease = lease
        self.attempts_field = attempts_field
        self.error_field = error_field  # a column that keeps the last failure, when the row has one
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap

    def _due(self, moment: Any, gone: list[str] | None = None) -> Any:
        m = self.model
        free = (m.lease_until.is_null()) | (m.lease_until < moment)
        if gone:
            free = free | m.lease_holder.in_(gone)
        return self.pending() & ((m.next_attempt_at.is_null()) | (m.next_attempt_at <= moment)) & free

    def _gone_holders(self, moment: Any) -> list[str]:
        """Holders of this host whose unexpired leases on pending rows outlived their process.
        Read before the claim's write transaction (the lock is not held while /proc is read)."""
        m = self.model
        holders = (
            m.select(m.lease_holder)
            .where(self.pending() & (m.lease_until >= moment) & m.lease_holder.startswith(host_prefix()))
            .distinct()
        )
        return [row.lease_holder for row in holders if holder_gone(row.lease_holder)]

    def claim(self, limit: int = 50) -> list[int]:
        """Lease up to ``limit`` due rows, oldest due first; returns their ids."""
        m = self.model
        moment = clock.now()
        gone = self._gone_holders(moment)
        with write_transaction(self.database):
            # Never attempted (no due time) first, then by due time. Written out: SQLite puts NULL
            # first and PostgreSQL last by default, and there a row given back "due now" waited
            # behind every retry that kept becoming due (more than one claim's worth: for ever).
            query = (
                m.select(m.id)
                .where(self._due(moment, gone))
                .order_by(m.next_attempt_at.asc(nulls="FIRST"), m.id)
                .limit(limit)
            )
            if not is_sqlite(self.database):
                query = query.for_update("FOR UPDATE SKIP LOCKED")
            ids = [row.id for row in query]
            if ids:
                m.update(lease_until=moment + self.lease, lease_holder=process_holder()).where(
                    m.id.in_(ids)
                ).execute()
        if gone and ids:
            log.info("%s: took over the leases of %s (no longer running)", m.__name__, ", ".join(gone))
        return ids

    def claim_one(self, row_id: int) -> bool:
        """Lease one given row if it is due (for work done at once, in the request that queued it)."""
        m = self.model
        moment = clock.now()
        updated = (
            m.update(lease_until=moment + self.lease, lease_holder=process_holder())
            .where((m.id == row_id) & self._due(moment))
            .execute()
        )
        return updated == 1

    def renew(self, row_id: int) -> None:
        m = self.model
        m.update(lease_until=clock.now() + self.lease, lease_holder=process_holder()).where(
            m.id == row_id
        ).execute()

    def release(self, row_id: int, *, after: timedelta | None = None) -> None:
        """Give the row back: due again now, or after ``after`` (a wait that is not a failure).
        Either way it gets a due time, so that it queues behind the rows due before it."""
        m = self.model
        due = clock.now() + (after or timedelta(0))
        m.update(lease_until=None, lease_holder=None, next_attempt_at=due).where(m.id == row_id).execute()

    def retry_later(self, row_id: int, error: str) -> timedelta:
        """Count a failed attempt and back off; returns the delay chosen."""
        m = self.model
        counter = getattr(m, self.attempts_field)
        row = m.select(counter).where(m.id == row_id).first()
        attempts = (getattr(row, self.attempts_field) if row else 0) + 1
        delay = backoff(attempts, base=self.backoff_base, cap=self.backoff_cap)
        changes = {
            counter: attempts,
            m.lease_until: None,
            m.lease_holder: None,
            m.next_attempt_at: clock.now() + delay,
        }
        if self.error_field:
            changes[getattr(m, self.error_field)] = error[:500]
        m.update(changes).where(m.id == row_id).execute()
        log.warning(
            "%s %s failed (attempt %s, next in %.0fs): %s",
            m.__name__,
            row_id,
            attempts,
            delay.total_seconds(),
            error,
        )
        return delay


def run_worker(
    name: str,
    database: peewee.DatabaseProxy,
    stop: threading.Event,
    work: Callable[[], int],
    *,
    idle_seconds: float,
    wake: threading.Event | None = None,
) -> None:
    """Call ``work`` (returns how many items it handled) until ``stop``; pause only when idle, and
    end a pause early when ``wake`` is set (work queued in this process). An exception is logged
    and the loop goes on: the rows stay where they were. Passes that fail in a row wait longer
    each time (``failure_pause``), and a machine fault (a full disk, a database out of reach) is
    logged once a minute, not once per pass (common/faults.py)."""
    failures = 0
    while not stop.is_set():
        handled = 0
        try:
            with database.connection_context():
                handled = work()
            failures = 0
        except Exception as exc:
            failures += 1
            fault = faults.classify(exc)
            if fault is not None:
                faults.report(fault, exc, f"the {name} worker")
            else:
                log.exception("%s pass failed (%d in a row)", name, failures)
        if failures:
            stop.wait(failure_pause(failures, idle_seconds))
        elif not handled:
            pause(stop, wake, idle_seconds)


# How often a pause that a wake may end looks at the stop event too.
_WAKE_STEP_SECONDS = 0.2


def pause(stop: threading.Event, wake: threading.Event | None, seconds: float) -> None:
    """Wait ``seconds``, or until ``stop`` or ``wake`` is set; a wake is used up by the pause it
    ends (one set while the work ran ends the next pause at once, so none is lost)."""
    if wake is None:
        stop.wait(seconds)
        return
    deadline = time.monotonic() + seconds
    while not stop.is_set() and not wake.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        wake.wait(min(left, _WAKE_STEP_SECONDS))
    wake.clear()


# A worker whose passes keep failing waits at most this long between them.
FAILURE_PAUSE_CAP_SECONDS = 60.0


def failure_pause(failures: int, idle_seconds: float) -> float:
    """The wait after ``failures`` failed passes in a row: the idle pause, doubled per further
    failure (at least 0.5 s), capped at FAILURE_PAUSE_CAP_SECONDS, so that a fault that lasts
    costs a pass a minute instead of a loop."""
    base = max(idle_seconds, 0.5)
    return min(FAILURE_PAUSE_CAP_SECONDS, max(base, base * 2 ** min(failures - 1, 16)))
