"""Forward-only migrations registered in code.

A service's migrations are the modules of one package (``migrations.dispatch``,
``migrations.engine``) named ``NNNN_name``; each has ``def up(db)``. Every migration runs in one
transaction together with its row in ``schema_migrations``, so a failing one leaves the database
exactly as it was and running ``migrate`` again only applies what is missing. Modules are found
with pkgutil so that the frozen executable (which collects the packages) finds the same list.

On PostgreSQL several nodes may start at once on one database (docs/operations.md, "Several
hosts"): each ``apply`` holds an advisory lock for its package while it reads what is pending and
applies it, so the second node waits and then finds nothing left to do, instead of failing on the
tables the first one is creating.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import ModuleType

import peewee

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+$")


class MigrationError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: Callable[[peewee.Database], None]


def discover(package: str) -> list[Migration]:
    module: ModuleType = importlib.import_module(package)
    found: list[Migration] = []
    for info in pkgutil.iter_modules(module.__path__):
        match = _NAME.match(info.name)
        if not match:
            continue
        mod = importlib.import_module(f"{package}.{info.name}")
        found.append(Migration(int(match.group(1)), info.name, mod.up))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"{package}: two migrations share a number: {versions}")
    return found


def _ensure_table(db: peewee.Database) -> None:
    db.execute_sql(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL, applied_at VARCHAR(40) NOT NULL)"
    )


def applied_versions(db: peewee.Database) -> set[int]:
    _ensure_table(db)
    return {row[0] for row in db.execute_sql("SELECT version FROM schema_migrations").fetchall()}


def schema_version(db: peewee.Database) -> int:
    return max(applied_versions(db), default=0)


def pending(db: peewee.Database, package: str) -> list[Migration]:
    done = applied_versions(db)
    return [m for m in discover(package) if m.version not in done]


@contextmanager
def advisory_lock(db: peewee.Database, key: str) -> Iterator[None]:
    """On PostgreSQL, a session advisory lock on ``key`` held by the caller's open connection and
    released explicitly (the connection goes back to a pool, it is not closed); nothing on SQLite,
    whose databases are files of one data directory (appliance/upgrades.py locks that)."""
    if isinstance(db, peewee.SqliteDatabase):
        yield
        return
    db.execute_sql("SELECT pg_advisory_lock(hashtext(%s))", (key,))
    try:
        yield
    finally:
        db.execute_sql("SELECT pg_advisory_unlock(hashtext(%s))", (key,))


def _one_migrator(db: peewee.Database, package: str) -> contextlib.AbstractContextManager[None]:
    """One migrator of ``package`` at a time per database."""
    return advisory_lock(db, f"appliance.migrate:{package}")


def apply(db: peewee.Database, package: str) -> list[str]:
    """Apply every pending migration, each in its own transaction; returns the names applied."""
    with db.connection_context():
        return apply_connected(db, package)


def apply_connected(db: peewee.Database, package: str) -> list[str]:
    """``apply`` on the connection the caller holds open (appliance/upgrades.py holds it across the
    backup taken before migrating)."""
    applied: list[str] = []
    with _one_migrator(db, package):
        _ensure_table(db)
        for migration in pending(db, package):
            try:
                with db.atomic():
                    migration.up(db)
                    db.execute_sql(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)"
                        if not isinstance(db, peewee.SqliteDatabase)
                        else "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (migration.version, migration.name, datetime.now(UTC).isoformat()),
                    )
            except Exception as exc:
                raise MigrationError(f"migration {package}.{migration.name} failed: {exc}") from exc
            applied.append(migration.name)
    return applied


def is_current(db: peewee.Database, package: str) -> bool:
    with db.connection_context():
        return not pending(db, package)
