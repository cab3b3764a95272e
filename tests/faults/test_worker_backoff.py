"""Background workers whose passes fail back off instead of looping (issue 32), and a machine
fault is logged once a minute, not once per pass."""

from __future__ import annotations

import logging
import sqlite3
import threading

import peewee

from appliance.common import faults
from appliance.common.jobs import FAILURE_PAUSE_CAP_SECONDS, failure_pause, run_worker


class _Stop(threading.Event):
    """A stop event that records each pause asked of it and stops after ``passes`` of them."""

    def __init__(self, passes: int) -> None:
        super().__init__()
        self.pauses: list[float] = []
        self.passes = passes

    def wait(self, timeout: float | None = None) -> bool:
        self.pauses.append(timeout or 0.0)
        if len(self.pauses) >= self.passes:
            self.set()
        return self.is_set()


def _disk_full() -> int:
    raise peewee.OperationalError(sqlite3.OperationalError("database or disk is full"))


def test_a_worker_failing_on_a_full_disk_waits_longer_each_time_and_logs_it_once(caplog) -> None:
    faults.reset()
    database = peewee.DatabaseProxy()
    database.initialize(peewee.SqliteDatabase(":memory:"))
    stop = _Stop(passes=12)
    caplog.set_level(logging.INFO)
    run_worker("mail", database, stop, _disk_full, idle_seconds=2.0)
    assert stop.pauses[:4] == [2.0, 4.0, 8.0, 16.0]  # doubling, not a loop at the idle pause
    assert max(stop.pauses) == FAILURE_PAUSE_CAP_SECONDS
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and lines[0].name == "appliance.faults" and lines[0].exc_info is None
    assert "disk_full in the mail worker" in lines[0].getMessage()


def test_a_worker_pass_that_succeeds_ends_the_back_off() -> None:
    database = peewee.DatabaseProxy()
    database.initialize(peewee.SqliteDatabase(":memory:"))
    results = iter([_disk_full, _disk_full, lambda: 0, lambda: 0])
    stop = _Stop(passes=4)
    run_worker("housekeeping", database, stop, lambda: next(results)(), idle_seconds=1.0)
    assert stop.pauses == [1.0, 2.0, 1.0, 1.0]


def test_the_pause_after_failures_never_drops_below_half_a_second() -> None:
    assert failure_pause(1, 0.0) == 0.5
    assert failure_pause(40, 0.5) == FAILURE_PAUSE_CAP_SECONDS
