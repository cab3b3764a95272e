"""`appliance audit verify|list|export|prune`: the administrator's view of both services' audit
logs (appliance/common/audit.py; docs/operations.md, Audit log)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings

SERVICES = ("dispatch", "engine")


@contextmanager
def _bound(settings: Settings, service: str) -> Iterator[Any]:
    """The service's audit module, its database bound and connected (migrated first)."""
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database, connection

    migrate_all(settings, [service])
    if service == "dispatch":
        from appliance.dispatch import audit as module
        from appliance.dispatch.db import database
    else:
        from appliance.engine import audit as module  # type: ignore[no-redef]
        from appliance.engine.db import database  # type: ignore[no-redef]
    url = settings.dispatch_db_url if service == "dispatch" else settings.engine_db_url
    bind_database(database, url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    with connection(database):
        yield module


def _chosen(service: str | None) -> tuple[str, ...]:
    return (service,) if service else SERVICES


_service = click.option("--service", type=click.Choice(SERVICES), default=None, help="Only this service.")


@click.group("audit")
def audit_group() -> None:
    """The audit logs of administrative acts (hash-chained)."""


@audit_group.command("verify")
@_service
@command_options
def verify_command(service: str | None, settings: Settings, as_json: bool) -> None:
    """Walk each service's hash chain; exit 1 when an entry was changed or removed from it."""
    result = {}
    for name in _chosen(service):
        with _bound(settings, name) as module:
            result[name] = module.verify().as_json()

    def text() -> str:
        lines = []
        for name, found in result.items():
            if found["ok"]:
                lines.append(f"{name}: {found['entries']} entries follow one another; head {found['head']}")
            else:
                lines.append(f"{name}: BROKEN at entry {found['brokenAt']}: it {found['reason']}")
        return "\n".join(lines)

    emit(as_json, result, text)
    sys.exit(0 if all(found["ok"] for found in result.values()) else 1)


@audit_group.command("list")
@click.option("--service", type=click.Choice(SERVICES), required=True)
@click.option("--after", type=click.IntRange(min=0), default=0, help="Entries after this id.")
@click.option("--limit", type=click.IntRange(1, 1000), default=100)
@command_options
def list_command(service: str, after: int, limit: int, settings: Settings, as_json: bool) -> None:
    """The entries, oldest first."""
    with _bound(settings, service) as module:
        entries = module.entries(after_id=after, limit=limit)

    def text() -> str:
        return "\n".join(f"{e['id']} {e['at']} {e['actor']} {e['action']} {e['subject']}" for e in entries)

    emit(as_json, {"entries": entries}, text)


@audit_group.command("export")
@click.option("--service", type=click.Choice(SERVICES), required=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="The CSV file.")
@command_options
def export_command(service: str, out: Path, settings: Settings, as_json: bool) -> None:
    """Every entry as CSV (formula-safe cells)."""
    from appliance.dispatch import audit as dispatch_audit
    from appliance.dispatch.reports.writers import csv_chunks

    with _bound(settings, service) as module, out.open("wb") as target:
        count = 0

        def rows() -> Iterator[list[object]]:
            nonlocal count
            after = 0
            while True:
                page = module.entries(after_id=after, limit=500)
                for entry in page:
                    count += 1
                    yield dispatch_audit.csv_row(entry)
                if len(page) < 500:
                    return
                after = int(page[-1]["id"])

        for chunk in csv_chunks(dispatch_audit.CSV_COLUMNS, rows()):
            target.write(chunk)
    emit(
        as_json, {"service": service, "entries": count, "out": str(out)}, f"{count} entries written to {out}"
    )


@audit_group.command("prune")
@_service
@command_options
def prune_command(service: str | None, settings: Settings, as_json: bool) -> None:
    """Remove entries older than audit_retention_days (0: keep them all), moving each chain's anchor."""
    from appliance.common import audit, clock
    from appliance.common.db import write_transaction

    result: dict[str, int] = {}
    for name in _chosen(service):
        with _bound(settings, name) as module:
            if settings.audit_retention_days <= 0:
                result[name] = 0
                continue
            cutoff = clock.now() - timedelta(days=settings.audit_retention_days)
            with write_transaction(module.AuditEntry._meta.database):
                result[name] = audit.prune(module.AuditEntry, module.AuditAnchor, cutoff)
    emit(as_json, {"removed": result}, ", ".join(f"{k}: {v} entries removed" for k, v in result.items()))


def register(group: click.Group) -> None:
    group.add_command(audit_group)
