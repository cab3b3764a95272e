"""A registry of readiness probes: each engine (database, routing, solver, tiles, storage, chains)
registers a real probe; a service's health is every probe's answer.

A probe returns a Check; one that raises is reported as failing with the exception's text, so a
broken engine can never break the health endpoint itself.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from appliance.common import migrate
from appliance.common.db import connection

log = logging.getLogger("appliance.health")

Status = Literal["pass", "fail", "not_built"]


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


class HealthRegistry:
    def __init__(self) -> None:
        self._probes: dict[str, Probe] = {}

    def register(self, name: str, probe: Probe) -> None:
        self._probes[name] = probe

    @property
    def names(self) -> list[str]:
        return list(self._probes)

    def run(self) -> tuple[bool, dict[str, dict[str, Any]]]:
        results: dict[str, dict[str, Any]] = {}
        healthy = True
        for name, probe in self._probes.items():
            started = time.perf_counter()
            try:
                check = probe()
            except Exception as exc:  # a probe must never take health down with it
                log.warning("health probe %s raised: %s", name, exc)
                check = Check("fail", f"{type(exc).__name__}: {exc}")
            entry: dict[str, Any] = {"status": check.status}
            if check.detail:
                entry["detail"] = check.detail
            if check.data:
                entry.update(check.data)
            entry["durationMs"] = round((time.perf_counter() - started) * 1000, 1)
            results[name] = entry
            healthy = healthy and check.ok
        return healthy, results


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
