"""A restore drill: a backup restored into a scratch directory and checked, so that a backup that
does not restore is known the day it is made, not the day it is needed.

What is checked, in order (the first failure ends the drill):

1. the manifest: its format, a schema this binary knows, and (encrypted) that the passphrase
   opens its key and its MAC matches (an altered manifest, with its checksums, is refused);
2. every file: opened (decrypted) into the scratch directory, its size and SHA-256 the manifest's;
3. each SQLite database (dispatch, engine, the embedded chain): ``PRAGMA integrity_check``,
   ``PRAGMA foreign_key_check``, the schema version the manifest names, and every table's row
   count against the counts recorded when the backup was taken (a backup made before counts were
   recorded is checked without them);
4. a service on PostgreSQL: its dump is read whole by ``pg_restore --list`` (a readable archive)
   beside its checksum; it is not restored into a scratch database (docs/operations.md says so).

The scratch directory is in the data directory (``.backup-drill-PID``: the clear copies are as
secret as the databases themselves) and is removed when the drill ends."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from appliance.backup import (
    BackupError,
    Unlock,
    _process_runs,
    _restore_file,
    _schema_version,
    check_schema,
    read_manifest,
    row_counts,
    unlock_backup,
)

SCRATCH_PREFIX = ".backup-drill-"


class DrillFailed(Exception):
    """One check of the drill failed; the message is one line."""


@dataclasses.dataclass
class DrillResult:
    backup: str  # the backup's name or path
    passed: bool
    detail: str  # what passed, or what failed first
    checks: list[dict[str, str]]  # each {"check", "status": "pass" | "fail", "detail"}
    seconds: float
    created_at: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "backup": self.backup,
            "passed": self.passed,
            "detail": self.detail,
            "createdAt": self.created_at,
            "seconds": self.seconds,
            "checks": self.checks,
        }


@contextlib.contextmanager
def scratch_directory(data_dir: Path | None) -> Iterator[Path]:
    """A private directory for one drill, removed afterwards: in the data directory when there is
    one (and any left by a drill whose process was killed removed first), else a temporary one."""
    import tempfile

    if data_dir is not None and data_dir.is_dir():
        for stale in data_dir.glob(f"{SCRATCH_PREFIX}*"):
            pid = stale.name[len(SCRATCH_PREFIX) :]
            if pid.isdigit() and not _process_runs(int(pid)):
                shutil.rmtree(stale, ignore_errors=True)
        path = data_dir / f"{SCRATCH_PREFIX}{os.getpid()}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(mode=0o700)
    else:
        path = Path(tempfile.mkdtemp(prefix="appliance-drill-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def drill(source: Path, scratch: Path, unlock: Unlock, *, label: str | None = None) -> DrillResult:
    """Restore the backup in ``source`` into ``scratch`` and check it (see the module's note)."""
    started = time.monotonic()
    checks: list[dict[str, str]] = []
    created_at = None
    restored = scratch / "restored"
    try:
        try:
            manifest = read_manifest(source)
            created_at = manifest.get("createdAt")
            check_schema(manifest)
            sealer = unlock_backup(manifest, unlock)
        except BackupError as exc:
            raise DrillFailed(str(exc)) from None
        checks.append(
            _passed("manifest", "readable" + (", its MAC matches" if sealer else ", not encrypted"))
        )
        shutil.rmtree(restored, ignore_errors=True)
        restored.mkdir(parents=True, mode=0o700)
        files = manifest.get("files", [])
        for entry in files:
            origin = source / entry["path"]
            if not origin.is_file():
                raise DrillFailed(f"{entry['path']} is missing from the backup")
            try:
                _restore_file(origin, restored, entry, sealer, lambda _n: None)
            except BackupError as exc:
                raise DrillFailed(str(exc)) from None
        checks.append(_passed("files", f"{len(files)} files restored, each matching its checksum"))
        for name, entry in manifest.get("databases", {}).items():
            checks.append(_check_database(name, entry, restored))
    except DrillFailed as exc:
        check = "manifest" if not checks else "files" if len(checks) == 1 else "database"
        checks.append({"check": check, "status": "fail", "detail": str(exc)})
    finally:
        shutil.rmtree(restored, ignore_errors=True)
    failed = [c for c in checks if c["status"] == "fail"]
    detail = (
        failed[0]["detail"]
        if failed
        else "; ".join(f"{c['check']}: {c['detail']}" for c in checks if c["check"].startswith("database"))
    )
    return DrillResult(
        backup=label or str(source),
        passed=not failed,
        detail=detail,
        checks=checks,
        seconds=round(time.monotonic() - started, 3),
        created_at=created_at,
    )


def _passed(check: str, detail: str) -> dict[str, str]:
    return {"check": check, "status": "pass", "detail": detail}


def _check_database(name: str, entry: dict[str, Any], restored: Path) -> dict[str, str]:
    path = restored / entry["path"]
    if entry.get("backend") != "sqlite":
        return _passed(f"database:{name}", _check_dump(name, path))
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        try:
            integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
            broken_keys = conn.execute("PRAGMA foreign_key_check").fetchall()
            version = _schema_version(conn)
            counts = row_counts(conn)
        except sqlite3.DatabaseError as exc:
            raise DrillFailed(f"the restored {name} database does not open: {exc}") from None
    if integrity != ["ok"]:
        raise DrillFailed(f"the restored {name} database fails its integrity check: {integrity[0]}")
    if broken_keys:
        table, _rowid, parent, _key = broken_keys[0]
        raise DrillFailed(
            f"the restored {name} database has {len(broken_keys)} rows whose foreign keys name no row "
            f"(first: {table} -> {parent})"
        )
    if name != "chain" and version != entry.get("schemaVersion"):
        raise DrillFailed(
            f"the restored {name} database is at schema {version}, "
            f"the manifest says {entry.get('schemaVersion')}"
        )
    expected = entry.get("rowCounts")
    if expected is not None and counts != expected:
        differ = sorted(set(counts) ^ set(expected) | {t for t in counts if counts[t] != expected.get(t)})
        first = differ[0]
        raise DrillFailed(
            f"the restored {name} database's row counts differ from the backup's ({len(differ)} tables; "
            f"{first}: {counts.get(first)} restored, {expected.get(first)} recorded)"
        )
    what = "integrity, foreign keys, schema" + (
        f", row counts of {len(counts)} tables" if expected is not None else ""
    )
    return _passed(f"database:{name}", f"{what} match")


def _check_dump(name: str, path: Path) -> str:
    """A PostgreSQL dump: checked against its checksum already; read whole by pg_restore --list."""
    if shutil.which("pg_restore") is None:
        return "a PostgreSQL dump matching its checksum (pg_restore not installed to read it)"
    done = subprocess.run(["pg_restore", "--list", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise DrillFailed(f"the {name} dump is not a readable PostgreSQL archive: {reason}")
    entries = sum(1 for line in done.stdout.splitlines() if line and not line.startswith(";"))
    return f"a PostgreSQL dump of {entries} entries, matching its checksum (not restored)"
