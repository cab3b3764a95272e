"""Safe upgrades: one migrator at a time, a backup before any pending migration, and a database
that a newer appliance migrated refused by an older one.

- **One migrator.** `serve`, `migrate`, `init` and every command that migrates first hold the data
  directory's lock file (``.migrate.lock``, an exclusive ``flock``) and, on PostgreSQL, a session
  advisory lock on each database, for the whole of: reading what is pending, the backup, and
  applying it. A second node (or a second command on this host) waits, then finds nothing pending
  and takes no second backup.
- **A backup first.** When an existing install (schema above 0) has migrations pending, the whole
  data directory is backed up (appliance/backup.py, the same format `appliance backup` writes) into
  ``upgrade-backups/`` in the data directory before the first migration runs; a failed backup
  stops the upgrade. It is sealed under the backup passphrase (``backup_passphrase``, from
  ``APPLIANCE_BACKUP_PASSPHRASE``, or ``backup_passphrase_file``) when one is set, and
  otherwise kept as the live files are (the data directory is 0700 and holds the same databases in
  the clear); the newest three are kept. Rolling back is restoring it (docs/operations.md).
- **Never backwards.** A database holding a migration this executable does not know was migrated
  by a newer appliance: every command refuses it in one line instead of serving a schema it does
  not understand.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import peewee

from appliance.common import migrate as migrations
from appliance.common.migrate import Migration, MigrationError

if TYPE_CHECKING:
    from appliance.settings import Settings

LOCK_FILE = ".migrate.lock"
BACKUPS = "upgrade-backups"
KEEP_BACKUPS = 3


class NewerDatabase(MigrationError):
    """The database was migrated by a newer appliance than this one."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """What migrating one service's database would do."""

    service: str
    schema_version: int
    pending: list[Migration]


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Held by one migrator of this data directory at a time (released when the process dies)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def database_lock(db: peewee.Database, service: str) -> contextlib.AbstractContextManager[None]:
    """On PostgreSQL, the upgrade's advisory lock on ``db`` (several hosts, one database; one key
    per service, as both services may share one database). The caller holds a connection open."""
    return migrations.advisory_lock(db, f"appliance.upgrade:{service}")


def plan(db: peewee.Database, service: str, package: str) -> Plan:
    """What is pending for ``service``; NewerDatabase when the database knows migrations this
    executable does not (inside a connection)."""
    known = migrations.discover(package)
    applied = migrations.applied_versions(db)
    unknown = sorted(applied - {m.version for m in known})
    if unknown:
        newest = max(m.version for m in known) if known else 0
        raise NewerDatabase(
            f"the {service} database is at schema {max(applied):04d}, newer than this appliance knows "
            f"({newest:04d}): it was migrated by a newer version. Run that version, or restore the "
            f"backup taken before the upgrade (docs/operations.md, Upgrades)"
        )
    return Plan(service, max(applied, default=0), [m for m in known if m.version not in applied])


def needs_backup(plans: list[Plan]) -> bool:
    """An existing install about to change: a first `init` (schema 0 everywhere) needs none."""
    return any(p.pending for p in plans) and any(p.schema_version > 0 for p in plans)


def backup_before(settings: Settings, plans: list[Plan]) -> Path:
    """Back the data directory up before migrating; returns the backup's directory."""
    from appliance.backup import BackupError, create_backup
    from appliance.backups.schedule import NoPassphrase, backup_passphrase
    from appliance.common.sealing import Sealer

    folder = settings.data_dir / BACKUPS
    folder.mkdir(mode=0o700, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    words = "-".join(f"{p.service}-{p.schema_version:04d}" for p in plans)
    out = folder / f"{stamp}-{words}"
    try:
        sealer: Sealer | None = Sealer.with_passphrase(backup_passphrase(settings))
    except NoPassphrase:  # none set: kept as the live files are, inside the data directory
        sealer = None
    try:
        create_backup(settings, out, sealer=sealer)
    except (BackupError, OSError) as exc:
        raise MigrationError(
            f"no migration applied: the backup before upgrading failed ({exc}); fix it, or take a "
            "backup yourself and run `appliance migrate --no-backup`"
        ) from None
    _prune(folder)
    return out


def _prune(folder: Path) -> None:
    taken = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    for old in taken[:-KEEP_BACKUPS]:
        shutil.rmtree(old, ignore_errors=True)
