"""init, migrate and health: the data directory and the databases."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.common import migrate as migrations
from appliance.common.db import make_database
from appliance.common.health import Verdict, verdict
from appliance.common.migrate import MigrationError
from appliance.settings import Settings

SERVICES = {
    "dispatch": "migrations.dispatch",
    "engine": "migrations.engine",
}


def database_url(settings: Settings, service: str) -> str:
    return settings.dispatch_db_url if service == "dispatch" else settings.engine_db_url


def migrate_all(
    settings: Settings, services: list[str] | None = None, *, backup: bool = True
) -> dict[str, Any]:
    """Create the data directory and bring the databases up to date; returns the contract's JSON.
    One migrator at a time, a backup of an existing install before anything changes, and a
    database from a newer appliance refused (appliance/upgrades.py)."""
    from appliance import upgrades

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"dataDir": str(settings.data_dir.resolve())}
    chosen = [s for s in SERVICES if services is None or s in services]
    dbs = {
        service: make_database(
            database_url(settings, service), busy_timeout_ms=settings.sqlite_busy_timeout_ms
        )
        for service in SERVICES
    }
    try:
        with upgrades.data_dir_lock(settings.data_dir), contextlib.ExitStack() as locks:
            for service, db in dbs.items():
                db.connect(reuse_if_open=True)
                locks.enter_context(upgrades.database_lock(db, service))
            plans = [upgrades.plan(dbs[s], s, SERVICES[s]) for s in chosen]
            if backup and upgrades.needs_backup(plans):
                taken = upgrades.backup_before(settings, plans)
                click.echo(f"backed up the data directory to {taken} before migrating", err=True)
            for service in chosen:
                migrations.apply_connected(dbs[service], SERVICES[service])
            for service, db in dbs.items():
                result[service] = {"schemaVersion": migrations.schema_version(db)}
    except MigrationError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        for db in dbs.values():
            # Every pooled connection closed: `serve` may fork its serving processes next.
            db.close_all() if hasattr(db, "close_all") else db.close()
    return result


def migration_plan(settings: Settings, services: list[str] | None = None) -> dict[str, Any]:
    """What `migrate` would apply, changing nothing (`migrate --dry-run`)."""
    from appliance import upgrades

    result: dict[str, Any] = {"dataDir": str(settings.data_dir.resolve())}
    plans = []
    for service in (s for s in SERVICES if services is None or s in services):
        db = make_database(database_url(settings, service), busy_timeout_ms=settings.sqlite_busy_timeout_ms)
        try:
            with db.connection_context():
                found = upgrades.plan(db, service, SERVICES[service])
        except MigrationError as exc:
            raise click.ClickException(str(exc)) from None
        finally:
            db.close_all() if hasattr(db, "close_all") else db.close()
        plans.append(found)
        result[service] = {
            "schemaVersion": found.schema_version,
            "pending": [m.name for m in found.pending],
        }
    result["backupFirst"] = upgrades.needs_backup(plans)
    return result


def require_initialised(settings: Settings) -> None:
    """Refuse, in one line, a data directory that `appliance init` never prepared (a mistyped
    --data-dir would otherwise be created empty and fail every check)."""
    where = settings.data_dir
    if not where.is_dir():
        raise click.ClickException(
            f"data directory {where} does not exist: run `appliance init --data-dir {where}` "
            "(or give the right --data-dir)"
        )
    for service in SERVICES:
        url = database_url(settings, service)
        if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
            raise click.ClickException(
                f"data directory {where} is not initialised (no {service} database): run "
                f"`appliance init --data-dir {where}`"
            )


def _describe(result: dict[str, Any]) -> str:
    return (
        f"data directory {result['dataDir']}\n"
        f"dispatch schema version {result['dispatch']['schemaVersion']}\n"
        f"engine schema version {result['engine']['schemaVersion']}"
    )


@click.command("init")
@command_options
def init_command(settings: Settings, as_json: bool) -> None:
    """Create the data directory and both databases, applying every migration."""
    result = migrate_all(settings)
    emit(as_json, result, lambda: _describe(result))


@click.command("migrate")
@click.option("--service", type=click.Choice(sorted(SERVICES)), default=None, help="Only this service.")
@click.option("--dry-run", is_flag=True, help="List the pending migrations; change nothing.")
@click.option(
    "--no-backup", is_flag=True, help="Do not back the data directory up first (you took a backup yourself)."
)
@command_options
def migrate_command(
    service: str | None, dry_run: bool, no_backup: bool, settings: Settings, as_json: bool
) -> None:
    """Apply pending migrations.

    An existing install is backed up to upgrade-backups/ in the data directory first."""
    services = [service] if service else None
    if dry_run:
        plan = migration_plan(settings, services)
        emit(as_json, plan, lambda: _describe_plan(plan))
        return
    result = migrate_all(settings, services, backup=not no_backup)
    emit(as_json, result, lambda: _describe(result))


def _describe_plan(plan: dict[str, Any]) -> str:
    lines = [f"data directory {plan['dataDir']}"]
    for service in SERVICES:
        if service in plan:
            entry = plan[service]
            pending = ", ".join(entry["pending"]) or "nothing pending"
            lines.append(f"{service} schema version {entry['schemaVersion']}: {pending}")
    if plan["backupFirst"]:
        lines.append("the data directory would be backed up to upgrade-backups/ first")
    return "\n".join(lines)


def run_health(settings: Settings) -> tuple[Verdict, dict[str, Any]]:
    """Every readiness check of both services, and the worst verdict of the two."""
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine

    report: dict[str, Any] = {}
    order: list[Verdict] = ["pass", "degraded", "fail"]
    worst: Verdict = "pass"
    for name, factory in (("dispatch", create_dispatch), ("engine", create_engine)):
        app = factory(settings)
        with app.app_context():
            _, checks = app.extensions[name].health.run()
        status = verdict(checks)
        report[name] = {"status": status, "checks": checks}
        worst = max(worst, status, key=order.index)
    return worst, report


def _not_built_warnings(report: dict[str, Any]) -> list[str]:
    """The lines warned on standard error: data not built yet, and a passing check's own warning
    (a custody key kept in the clear)."""
    return [
        f"warning: {service} {check} not built: {result.get('detail', '')}".rstrip(": ")
        if result["status"] == "not_built"
        else f"warning: {service} {check}: {result['warning']}"
        for service, entry in report.items()
        for check, result in entry["checks"].items()
        if result["status"] == "not_built" or result.get("warning")
    ]


@click.command("health")
@command_options
def health_command(settings: Settings, as_json: bool) -> None:
    """Run every readiness check of both services; exit 1 when any fails.

    A check whose data is not built yet (roads, map tiles) is no failure: the service answers
    without it, so the command warns on standard error and still exits 0 (status "degraded")."""
    from appliance.cli.custody import with_passphrase

    require_initialised(settings)
    # The engine's checks open the custody key: an encrypted one needs its passphrase (asked here
    # on a terminal when the environment gives none).
    worst, report = run_health(with_passphrase(settings))

    def text() -> str:
        lines = []
        for service, entry in report.items():
            lines.append(f"{service}: {entry['status']}")
            for check, result in entry["checks"].items():
                detail = f" ({result['detail']})" if result.get("detail") else ""
                lines.append(f"  {check}: {result['status']}{detail}")
        return "\n".join(lines)

    emit(as_json, report, text)
    for warning in _not_built_warnings(report):
        click.echo(warning, err=True)
    sys.exit(1 if worst == "fail" else 0)


def register(group: click.Group) -> None:
    group.add_command(init_command)
    group.add_command(migrate_command)
    group.add_command(health_command)
