"""The scheduled backups' history in the dispatch database (migration 0027): one row per backup
run and one per restore drill, so that every node of a deployment reads the same answers for its
``backups`` readiness check and its metrics, whichever node took the backup.

Readiness (dispatch /healthz, `appliance health`), when backups are scheduled:

- fails while a backup's latest drill in a destination failed and the backup is still there: a
  backup that does not restore is a critical finding (as a critical reconciliation finding fails
  the engine's ``treasury`` check). Retention never prunes such a backup (it is the evidence):
  the check passes again once it drills well, or once an administrator has removed it (the next
  run sees it gone);
- passes with a warning (``warning`` in the check, on standard error from `appliance health`)
  while the last good backup is older than twice the interval, or none has been taken yet;
  the service still serves: a missing backup is not a broken service.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import peewee
from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common import clock
from appliance.common.db import UTCDateTimeField, connection, write_transaction
from appliance.common.health import Check, Probe
from appliance.dispatch.db import database
from appliance.dispatch.models.base import BaseModel


class BackupRun(BaseModel):
    name = peewee.CharField(max_length=64)
    started_at = UTCDateTimeField()
    finished_at = UTCDateTimeField()
    passed = peewee.BooleanField()
    destinations = peewee.CharField(max_length=500)
    bytes = peewee.BigIntegerField(default=0)
    seconds = peewee.FloatField(default=0)
    error = peewee.TextField(null=True)

    class Meta:
        table_name = "backup_run"


class BackupDrill(BaseModel):
    backup = peewee.CharField(max_length=64)
    destination = peewee.CharField(max_length=500)
    drilled_at = UTCDateTimeField()
    passed = peewee.BooleanField()
    seconds = peewee.FloatField(default=0)
    detail = peewee.TextField()
    gone = peewee.BooleanField(default=False)  # the backup is no longer in that destination

    class Meta:
        table_name = "backup_drill"


def _trim(model: type[BaseModel], kept: int) -> None:
    """Only the newest ``kept`` rows of ``model`` stay."""
    oldest_kept = model.select(model.id).order_by(model.id.desc()).offset(kept - 1).limit(1).first()
    if oldest_kept is not None:
        model.delete().where(model.id < oldest_kept.id).execute()


def record_run(
    name: str,
    started_at: datetime,
    *,
    passed: bool,
    destinations: str,
    size: int = 0,
    seconds: float = 0.0,
    error: str | None = None,
    kept: int,
) -> None:
    with write_transaction(database):
        BackupRun.create(
            name=name,
            started_at=started_at,
            finished_at=clock.now(),
            passed=passed,
            destinations=destinations[:500],
            bytes=size,
            seconds=seconds,
            error=None if error is None else error[:2000],
        )
        _trim(BackupRun, kept)


def record_drill(
    backup: str, destination: str, *, passed: bool, detail: str, seconds: float, kept: int
) -> None:
    with write_transaction(database):
        BackupDrill.create(
            backup=backup,
            destination=destination[:500],
            drilled_at=clock.now(),
            passed=passed,
            seconds=seconds,
            detail=detail[:2000],
        )
        _trim(BackupDrill, kept)


def last_drilled(destination: str) -> dict[str, datetime]:
    """When each backup of ``destination`` was last drilled (by name)."""
    rows = (
        BackupDrill.select(BackupDrill.backup, peewee.fn.MAX(BackupDrill.drilled_at).alias("at"))
        .where(BackupDrill.destination == destination[:500])
        .group_by(BackupDrill.backup)
    )
    return {row.backup: BackupDrill.drilled_at.python_value(row.at) for row in rows}


def mark_gone(destination: str, present: set[str]) -> None:
    """The backups of ``destination`` whose drills are recorded but that are no longer there."""
    label = destination[:500]
    drilled = {
        row.backup
        for row in BackupDrill.select(BackupDrill.backup)
        .where((BackupDrill.destination == label) & (BackupDrill.gone == False))  # noqa: E712
        .distinct()
    }
    missing = sorted(drilled - present)
    if missing:
        with write_transaction(database):
            BackupDrill.update(gone=True).where(
                (BackupDrill.destination == label) & BackupDrill.backup.in_(missing)
            ).execute()


def latest_drills() -> list[BackupDrill]:
    """The latest drill of each backup still in its destination."""
    latest = (
        BackupDrill.select(peewee.fn.MAX(BackupDrill.id))
        .where(BackupDrill.gone == False)  # noqa: E712
        .group_by(BackupDrill.backup, BackupDrill.destination)
    )
    return list(BackupDrill.select().where(BackupDrill.id.in_(latest)).order_by(BackupDrill.id.desc()))


def failed_latest(destination: str) -> set[str]:
    """The backups of ``destination`` whose latest drill failed (retention keeps them)."""
    return {d.backup for d in latest_drills() if not d.passed and d.destination == destination[:500]}


def drill_passed(backup: str) -> bool:
    """Whether the latest drill of ``backup`` (in any destination) passed."""
    row = BackupDrill.select().where(BackupDrill.backup == backup).order_by(BackupDrill.id.desc()).first()
    return row is not None and row.passed


def latest_good_backup() -> str | None:
    """The newest backup whose latest drills all passed (retention never prunes it)."""
    for run in BackupRun.select().where(BackupRun.passed).order_by(BackupRun.id.desc()).limit(50):
        if drill_passed(run.name):
            return str(run.name)
    return None


def backups_probe(interval: timedelta) -> Probe:
    """The ``backups`` readiness check (see the module's note)."""

    def probe() -> Check:
        with connection(database):
            drill = BackupDrill.select().order_by(BackupDrill.id.desc()).first()
            failing = [d for d in latest_drills() if not d.passed]
            good = BackupRun.select().where(BackupRun.passed).order_by(BackupRun.id.desc()).first()
            failures = BackupRun.select().where(
                BackupRun.passed == False,  # noqa: E712 (peewee)
                BackupRun.id > (good.id if good else 0),
            )
            failed_runs = list(failures.order_by(BackupRun.id.desc()).limit(1))
            failed_count = failures.count()
        data: dict[str, object] = {}
        if good is not None:
            data["lastBackup"] = good.name
            data["lastBackupAt"] = clock.iso(good.finished_at)
        if drill is not None:
            data["lastDrill"] = {
                "backup": drill.backup,
                "destination": drill.destination,
                "passed": drill.passed,
            }
        if failing:
            first = failing[0]
            data["failedDrills"] = [{"backup": d.backup, "destination": d.destination} for d in failing]
            return Check(
                "fail",
                f"the restore drill of {first.backup} in {first.destination} failed: {first.detail}"
                + (f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""),
                data,
            )
        warning = None
        if good is None or clock.now() - good.finished_at > 2 * interval:
            warning = (
                "no backup has been taken yet"
                if good is None
                else f"the last good backup, {good.name}, is older than twice the interval "
                f"({_hours(2 * interval)})"
            )
            if failed_runs:
                warning += f"; {failed_count} runs failed since, the last: {failed_runs[0].error}"
        if warning is None:
            return Check("pass", data=data)
        return Check("pass", "warning: " + warning, {**data, "warning": warning})

    return probe


def _hours(span: timedelta) -> str:
    seconds = span.total_seconds()
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds:g} s"


def backup_gauges() -> Iterator[Metric]:
    success = GaugeMetricFamily(
        "appliance_backup_last_success_timestamp_seconds", "Unix time the last good scheduled backup ended."
    )
    duration = GaugeMetricFamily(
        "appliance_backup_last_duration_seconds", "How long the last good scheduled backup took."
    )
    size = GaugeMetricFamily("appliance_backup_last_bytes", "Bytes of the last good scheduled backup.")
    failures = GaugeMetricFamily(
        "appliance_backup_failures", "Scheduled backup runs that failed since the last good one."
    )
    drill = GaugeMetricFamily(
        "appliance_backup_drill_passed", "1 when the latest restore drill passed, 0 when it failed."
    )
    failing = GaugeMetricFamily(
        "appliance_backup_drills_failing",
        "Backups still kept whose latest restore drill failed (any fails readiness).",
    )
    drilled = GaugeMetricFamily(
        "appliance_backup_drill_timestamp_seconds", "Unix time of the latest restore drill."
    )
    with connection(database):
        good = BackupRun.select().where(BackupRun.passed).order_by(BackupRun.id.desc()).first()
        failed = (
            BackupRun.select()
            .where((BackupRun.passed == False) & (BackupRun.id > (good.id if good else 0)))  # noqa: E712
            .count()
        )
        last = BackupDrill.select().order_by(BackupDrill.id.desc()).first()
        failing_count = sum(1 for d in latest_drills() if not d.passed)
    failing.add_metric([], failing_count)
    if good is not None:
        success.add_metric([], good.finished_at.timestamp())
        duration.add_metric([], float(good.seconds))
        size.add_metric([], float(good.bytes))
    failures.add_metric([], failed)
    if last is not None:
        drill.add_metric([], 1 if last.passed else 0)
        drilled.add_metric([], last.drilled_at.timestamp())
    yield from (success, duration, size, failures, drill, drilled, failing)
