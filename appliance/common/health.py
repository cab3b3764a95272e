"""A registry of readiness probes: each engine (database, routing, solver, tiles, storage, chains)
registers a real probe; a service's health is every probe's answer.

A probe returns a Check; one that raises is reported as failing with the exception's text, so a
broken engine can never break the health endpoint itself.

Each probe's result is kept for CACHE_SECONDS (issues 30 and 33): a load balancer probing every
few milliseconds costs a dictionary lookup, not an OR-Tools solve (~71 ms) and a tile read, and a
dependency that starts failing still shows within CACHE_SECONDS plus the probe's own time. While
one request refreshes a probe, concurrent ones answer with its last result instead of queueing
behind it (or probing it again).

A probe that does not answer within PROBE_DEADLINE_SECONDS (a frozen node or storage server, whose
client waits out its own timeout of ten seconds or more) is reported as failing then, not when
its client gives up: it runs in a thread of its own, and goes on (one at a time per check) until
it answers; its answer is the next one shown. The deadline is two seconds, not less: on a busy
machine a healthy probe (a solve, a query) may take a second, and a load balancer must not take
a node out for being busy. A check's first probe (nothing to show yet: a process starting, OR-Tools
loading) is waited for up to FIRST_PROBE_DEADLINE_SECONDS.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from appliance.common import migrate
from appliance.common.db import connection
from appliance.common.disk_floor import MB, FreeSpaceTrend, floor_mb

log = logging.getLogger("appliance.health")

Status = Literal["pass", "fail", "not_built"]

CACHE_SECONDS = 1.0
PROBE_DEADLINE_SECONDS = 2.0
FIRST_PROBE_DEADLINE_SECONDS = 10.0


def monotonic() -> float:
    """The clock of the cache (a function of this module, so tests can move it)."""
    return time.monotonic()


@dataclasses.dataclass(frozen=True)
class Check:
    status: Status
    detail: str = ""
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "pass"


Probe = Callable[[], Check]

# A service's verdict over its checks: every check passes; nothing fails but some engine's data is
# not built yet (the service answers without it: straight-line estimates, no map); or a check fails.
Verdict = Literal["pass", "degraded", "fail"]


def verdict(checks: dict[str, dict[str, Any]]) -> Verdict:
    statuses = {entry["status"] for entry in checks.values()}
    if statuses <= {"pass"}:
        return "pass"
    return "degraded" if statuses <= {"pass", "not_built"} else "fail"


class _Run:
    """One run of a probe, in a thread of its own (so that a frozen dependency costs a health
    request at most the deadline)."""

    def __init__(self, name: str, probe: Probe) -> None:
        self.name = name
        self.probe = probe
        self.started = time.perf_counter()
        self.finished_at = 0.0  # health.monotonic() when it answered
        self.check = Check("fail", "not answered")
        self.seconds = 0.0
        self.done = threading.Event()
        threading.Thread(target=self._run, name=f"health-{name}", daemon=True).start()

    def _run(self) -> None:
        try:
            self.check = self.probe()
        except Exception as exc:  # a probe must never take health down with it
            log.warning("health probe %s raised: %s", self.name, exc)
            self.check = Check("fail", f"{type(exc).__name__}: {exc}")
        finally:
            self.seconds = time.perf_counter() - self.started
            self.finished_at = monotonic()
            self.done.set()


class HealthRegistry:
    def __init__(
        self,
        cache_seconds: float = CACHE_SECONDS,
        deadline_seconds: float = PROBE_DEADLINE_SECONDS,
        first_deadline_seconds: float = FIRST_PROBE_DEADLINE_SECONDS,
    ) -> None:
        self.cache_seconds = cache_seconds
        self.deadline_seconds = deadline_seconds
        self.first_deadline_seconds = first_deadline_seconds
        self._running: dict[str, _Run] = {}  # a probe's run not yet reported (one per check)
        self._probes: dict[str, Probe] = {}
        # name -> (monotonic time the probe started, its entry, whether it passed)
        self._kept: dict[str, tuple[float, dict[str, Any], bool]] = {}
        self._refreshing: dict[str, threading.Lock] = {}

    def register(self, name: str, probe: Probe) -> None:
        self._probes[name] = probe
        self._refreshing.setdefault(name, threading.Lock())
        self._kept.pop(name, None)

    @property
    def names(self) -> list[str]:
        return list(self._probes)

    def run(self, *, fresh: bool = False) -> tuple[bool, dict[str, dict[str, Any]]]:
        """Every check's entry (a copy) and whether all pass; ``fresh`` probes everything now."""
        results: dict[str, dict[str, Any]] = {}
        healthy = True
        for name, probe in list(self._probes.items()):
            kept = self._kept.get(name)
            if fresh or kept is None or monotonic() - kept[0] >= self.cache_seconds:
                kept = self._refresh(name, probe, kept, fresh)
            results[name] = dict(kept[1])
            healthy = healthy and kept[2]
        return healthy, results

    def _refresh(
        self,
        name: str,
        probe: Probe,
        kept: tuple[float, dict[str, Any], bool] | None,
        fresh: bool,
    ) -> tuple[float, dict[str, Any], bool]:
        lock = self._refreshing.setdefault(name, threading.Lock())
        # Someone is probing it now: its last result is at most a probe's time older.
        if not lock.acquire(blocking=kept is None or fresh):
            assert kept is not None
            return kept
        try:
            again = self._kept.get(name)
            if (
                not fresh
                and again is not None
                and again is not kept
                and monotonic() - again[0] < self.cache_seconds
            ):
                return again  # refreshed by another request while this one waited
            started_at = monotonic()
            run = self._running.get(name)
            if run is not None and run.done.is_set() and started_at - run.finished_at >= self.cache_seconds:
                run = None  # it answered long ago (after its deadline): probe again
            if run is None or run.probe is not probe:
                run = self._running[name] = _Run(name, probe)
            deadline = self.deadline_seconds if kept is not None else self.first_deadline_seconds
            if run.done.wait(max(0.0, deadline - (time.perf_counter() - run.started))):
                del self._running[name]
                check, seconds = run.check, run.seconds
            else:  # still running: failing now; its answer, when it comes, is shown next
                seconds = time.perf_counter() - run.started
                waited = f"no answer within {deadline:g} s ({seconds:.1f} s so far)"
                check = Check("fail", waited)
            entry: dict[str, Any] = {"status": check.status}
            if check.detail:
                entry["detail"] = check.detail
            if check.data:
                entry.update(check.data)
            entry["durationMs"] = round(seconds * 1000, 1)
            fresh_kept = (started_at, entry, check.ok)
            self._kept[name] = fresh_kept
            return fresh_kept
        finally:
            lock.release()


def database_probe(database: Any, migrations_package: str) -> Probe:
    """The database answers a query and carries every migration this build knows."""

    def probe() -> Check:
        with connection(database):
            database.execute_sql("SELECT 1").fetchone()
            missing = migrate.pending(database, migrations_package)
        if missing:
            return Check("fail", "migrations pending: " + ", ".join(m.name for m in missing))
        return Check("pass")

    return probe


def disk_probe(path: Any, min_free_mb: int, headroom_minutes: int = 0) -> Probe:
    """The filesystem holding ``path`` (the data directory: SQLite databases, outbox, objects) has
    more free space than its floor: ``min_free_mb``, or ``headroom_minutes`` of writes at the rate
    it has been filling (common/disk_floor.py), whichever is larger. It fails below that floor,
    while SQLite can still write, so a load balancer or an operator is told before writes start
    failing (issue 32)."""
    trend = FreeSpaceTrend()

    def probe() -> Check:
        usage = shutil.disk_usage(path)
        fill_rate = trend.observe(monotonic(), usage.free)
        floor = floor_mb(min_free_mb, headroom_minutes, fill_rate)
        free_mb = usage.free // MB
        data: dict[str, Any] = {"freeMb": free_mb, "minFreeMb": floor}
        if fill_rate is not None:
            data["fillMbPerMinute"] = round(fill_rate * 60 / MB, 1)
        if free_mb < floor:
            if floor > min_free_mb:
                detail = (
                    f"{free_mb} MB free, less than {headroom_minutes} minutes of writes at the last"
                    f" minutes' rate ({data['fillMbPerMinute']} MB a minute)"
                )
            else:
                detail = f"{free_mb} MB free, below min_free_disk_mb ({min_free_mb} MB)"
            return Check("fail", detail, data)
        return Check("pass", data=data)

    return probe
