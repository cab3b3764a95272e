"""Online backup of a data directory, and its restore into an empty one.

A backup is a directory: ``manifest.json`` and, under the same relative paths as in the data
directory, a copy of every database and file the appliance needs to start again (both databases,
the embedded chain, objects, outbox, keys, settings, built roads and tiles).

Why it is consistent while the appliance serves: each SQLite database is copied with SQLite's
backup API from a read transaction opened before any copying starts, so each copy is the database
as it was committed at that moment (WAL mode lets writers go on meanwhile). The engine's snapshot
is taken before the chain's: every transaction the engine had recorded is then in the chain's copy
(the chain may hold a few more, which is what the engine's pipeline meets after any crash). Files
are copied after the databases, so every object a database row names is there. A service on
PostgreSQL is dumped with ``pg_dump`` (one snapshot of its own) in the same order.

The manifest lists every file with its size and SHA-256 (as stored in the backup), the appliance
version and each database's schema version; restore checks all of them and refuses a backup whose
schema is newer than the migrations this binary knows. For each SQLite database it also records
every table's row count in the copy (``rowCounts``), which restore drills compare
(appliance/backups/drill.py).

Encrypted (issue 41): a backup holds everything that opens the live install (appliance.key signs
access tokens and unseals operators' HMAC secrets; the databases hold sealed secrets and hashes;
appliance.toml may hold credentials), so every file of it is sealed (appliance/common/sealing.py)
under one data key that a backup passphrase or an age recipient unlocks; the manifest keeps the
key's header (no secret) and a MAC over itself under that key, so an altered manifest (its chain
heights, its files) is refused too. A database snapshot is written in the clear only inside the
data directory (as secret as the database itself), sealed from there into the backup, and removed.
``sealer=None`` (`backup --no-encryption`) writes the files as they are.

Sent mail stays out: the outbox's .eml files are mail already handed over, and hold the sign-in,
reset and invite links they carried (live until used or expired).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from appliance import __version__
from appliance.common.sealing import Sealer, SealingError, open_file, seal_file
from appliance.settings import Settings

FORMAT = 2
READABLE_FORMATS = (1, 2)  # 1: before encryption (never sealed)
MAC = "manifestMac"
MANIFEST = "manifest.json"
CHAIN_FILE = "chain/eth_local.db"
SIGNER_FILE = "signer.db"  # appliance/engine/signer/store.py
MIGRATIONS = {"dispatch": "migrations.dispatch", "engine": "migrations.engine"}
# Files of the data directory kept as they are (beside the databases); directories copied whole.
# custody.key only when it is encrypted (custody_key_in_backup): the 24 words in the clear never
# leave the host in a backup; the operator keeps them (or encrypts the key) instead.
PLAIN_FILES = ("appliance.key", "custody.key", "appliance.toml", "tiles.mbtiles")
CUSTODY_KEY = "custody.key"
SCRATCH_PREFIX = ".backup-"  # clear snapshots of an encrypted backup, in the data directory
# Not "outbox": its .eml files are sent mail carrying live sign-in, reset and invite links.
PLAIN_DIRS = ("objects",)
CHUNK = 1 << 20

Progress = Callable[[int], None]


class BackupError(Exception):
    """A backup that cannot be made or restored; the message is one line."""


class BackupLocked(BackupError):
    """An encrypted backup that the passphrase or identities given do not open (or none given)."""


@dataclasses.dataclass(frozen=True)
class Unlock:
    """What may open an encrypted backup: a passphrase (asked for only when the backup needs
    one) or age identities (``AGE-SECRET-KEY-1…``)."""

    passphrase: Callable[[], str] | None = None
    identities: tuple[str, ...] = ()
    # A secret was given on purpose (a passphrase file or variable, an identity): the backup is
    # meant to be encrypted, so one in the clear may have been put in its place by someone who
    # can write where backups are kept. Refused unless the operator says a clear one is expected.
    expects_encryption: bool = False


@dataclasses.dataclass
class Database:
    """One database to copy: a SQLite file or a PostgreSQL URL."""

    name: str  # dispatch, engine or chain
    backend: str  # sqlite or postgresql
    location: str  # the file path, or the URL
    target: str  # its path inside the backup
    snapshot: sqlite3.Connection | None = None
    schema_version: int | None = None
    row_counts: dict[str, int] | None = None  # each table's rows in the copy (SQLite only)


# -- hashing and copying -------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def copy_hashing(source: Path, target: Path, progress: Progress) -> str:
    """Copy ``source`` to ``target`` (created 0600) and return the SHA-256 of what was read."""
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(source, "rb") as src, os.fdopen(fd, "wb") as dst:
        while chunk := src.read(CHUNK):
            digest.update(chunk)
            dst.write(chunk)
            progress(len(chunk))
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


def _fsync_tree(root: Path) -> None:
    for directory, _dirs, _files in os.walk(root):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- what to copy --------------------------------------------------------------------------------


def _sqlite_path(url: str) -> Path | None:
    return Path(url[len("sqlite:///") :]) if url.startswith("sqlite:///") else None


def databases_of(settings: Settings) -> list[Database]:
    """The databases in snapshot order: the engine before its chain (see the module's note)."""
    found = []
    for name, url in (("engine", settings.engine_db_url), ("dispatch", settings.dispatch_db_url)):
        path = _sqlite_path(url)
        if path is None:
            found.append(Database(name, "postgresql", url, f"{name}.pgdump"))
        else:
            if not path.is_file():
                raise BackupError(f"{path}: no {name} database (run appliance init first)")
            found.append(Database(name, "sqlite", str(path), f"{name}.db"))
    chain = settings.data_dir / CHAIN_FILE
    if chain.is_file():
        found.insert(1, Database("chain", "sqlite", str(chain), CHAIN_FILE))
    # The signer's own state (policy, journal, nonces), after the engine's snapshot: its journal
    # then holds every transaction the engine's copy knows of. A restore without it would start
    # the signer on its default policy, a loosening no delay stood in front of.
    signer = settings.data_dir / SIGNER_FILE
    if signer.is_file():
        found.insert(1, Database("signer", "sqlite", str(signer), SIGNER_FILE))
    return found


def plain_files(data_dir: Path) -> list[tuple[Path, str]]:
    """(source, relative path) of every file kept as it is; temporary files of writers left out."""
    files: list[tuple[Path, str]] = []
    for name in PLAIN_FILES:
        if (data_dir / name).is_file() and (
            name != CUSTODY_KEY or custody_key_in_backup(data_dir) == "encrypted"
        ):
            files.append((data_dir / name, name))
    for top in PLAIN_DIRS:
        for path in sorted((data_dir / top).rglob("*")) if (data_dir / top).is_dir() else []:
            if path.is_file() and not path.name.startswith("."):
                files.append((path, path.relative_to(data_dir).as_posix()))
    routing = data_dir / "routing" / "current"
    if routing.is_dir():
        build = routing.resolve()
        for path in sorted(build.rglob("*")):
            if path.is_file():
                files.append((path, f"routing/{build.name}/{path.relative_to(build).as_posix()}"))
    return files


def custody_key_in_backup(data_dir: Path) -> str:
    """What a backup holds of custody.key: "encrypted" (the file, as it is), "left out (not
    encrypted)" (the operator keeps the 24 words, or runs `appliance custody encrypt`), or "none"."""
    from appliance.engine.custody_file import file_is_encrypted

    encrypted = file_is_encrypted(data_dir)
    return "none" if encrypted is None else "encrypted" if encrypted else "left out (not encrypted)"


def routing_link(data_dir: Path) -> dict[str, str]:
    routing = data_dir / "routing" / "current"
    return {"routing/current": routing.resolve().name} if routing.is_dir() else {}


# -- snapshots -----------------------------------------------------------------------------------


def _schema_version(conn: sqlite3.Connection) -> int:
    try:
        row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0] or 0)


def _pin(database: Database, busy_timeout_ms: int) -> None:
    """Open a read transaction: from now on this connection sees the database as committed now."""
    conn = sqlite3.connect(database.location, isolation_level=None, timeout=busy_timeout_ms / 1000)
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot starts here
    if database.name not in ("chain", "signer"):  # neither has schema_migrations
        database.schema_version = _schema_version(conn)
    database.snapshot = conn


def _copy_pinned(database: Database, target: Path) -> None:
    """The pinned snapshot into ``target``: one backup step, inside the pinned read transaction, so
    writers committing meanwhile cannot change what is copied."""
    assert database.snapshot is not None
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    copy = sqlite3.connect(target, isolation_level=None)
    try:
        database.snapshot.backup(copy, pages=-1)
        # One self-contained file (no -wal beside it); the server switches it back to WAL.
        copy.execute("PRAGMA journal_mode=DELETE")
        check = copy.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise BackupError(f"{database.name} copy failed its integrity check: {check}")
        database.row_counts = row_counts(copy)
    finally:
        copy.close()
    os.chmod(target, 0o600)


def row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows of every table of a SQLite database: recorded in the manifest at backup time, so that
    a restore drill (appliance/backups/drill.py) can tell a restored copy from a truncated one."""
    tables = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {name: int(conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]) for name in tables}


def libpq_command(url: str) -> tuple[str, dict[str, str]]:
    """A PostgreSQL URL split for pg_dump and pg_restore: the connection string without its
    password (for the command line, which any local user reads in ``ps`` or /proc) and the
    environment that carries the password instead (PGPASSWORD, readable by this user only). A URL
    without a password leaves libpq's own PGPASSWORD or ~/.pgpass as the appliance uses them."""
    from psycopg2.extensions import make_dsn, parse_dsn

    params = parse_dsn(url)
    password = params.pop("password", None)
    env = dict(os.environ)
    if password is not None:
        env["PGPASSWORD"] = password
    return make_dsn(**params), env


def _pg_dump(database: Database, target: Path) -> None:
    if shutil.which("pg_dump") is None:
        raise BackupError(f"{database.name} is on PostgreSQL and pg_dump is not installed")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    dsn, env = libpq_command(database.location)
    done = subprocess.run(
        [
            "pg_dump",
            "--format=custom",
            "--no-owner",
            "--no-privileges",
            "--file",
            str(target),
            "--dbname",
            dsn,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise BackupError(f"pg_dump of {database.name} failed: {done.stderr.strip().splitlines()[-1:]}")
    os.chmod(target, 0o600)
    database.schema_version = _pg_schema_version(database.location)


def _pg_schema_version(url: str) -> int:
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT max(version) FROM schema_migrations")
            row = cursor.fetchone()
    finally:
        connection.close()
    return int(row[0] or 0) if row else 0


def _estimated_bytes(databases: list[Database], files: list[tuple[Path, str]]) -> int:
    total = sum(Path(d.location).stat().st_size for d in databases if d.backend == "sqlite")
    return total + sum(path.stat().st_size for path, _ in files)


# -- backup --------------------------------------------------------------------------------------


def create_backup(
    settings: Settings,
    out: Path,
    *,
    sealer: Sealer | None,
    progress: Callable[[int], Progress] = lambda _total: lambda _n: None,
) -> dict[str, Any]:
    """Copy the data directory of ``settings`` into the new directory ``out``; returns the manifest.

    Every file is sealed under ``sealer`` (None: written as it is, which `backup` allows only with
    --no-encryption). ``progress(total_bytes)`` is called once and returns the function told every
    copied amount. The copy is written beside ``out`` and renamed to it when complete, so ``out``
    either holds a whole backup or does not exist."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BackupError(f"{out} already exists and is not empty: give a new path")
    started = time.monotonic()
    created_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    data_dir = settings.data_dir
    databases = databases_of(settings)
    # Read before any snapshot: every transaction mined up to these heights was signed before the
    # engine's snapshot, so a restored copy looks for what it does not know only above them.
    heights = chain_heights(settings)
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True, mode=0o700)
    # Clear snapshots of an encrypted backup are made here, in the data directory beside the
    # databases they copy, never on the backup's disk.
    scratch = data_dir / f"{SCRATCH_PREFIX}{os.getpid()}" if sealer is not None else staging
    try:
        if sealer is not None:
            remove_stale_scratch(data_dir)
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(mode=0o700)
        entries = []
        with contextlib.ExitStack() as closing:
            for database in databases:  # every snapshot taken before anything is copied
                if database.backend == "sqlite":
                    _pin(database, settings.sqlite_busy_timeout_ms)
                    closing.callback(database.snapshot.close)  # type: ignore[union-attr]
                else:
                    _pg_dump(database, scratch / database.target)
            files = plain_files(data_dir)
            advance = progress(_estimated_bytes(databases, files))
            for database in databases:
                clear = scratch / database.target
                if database.backend == "sqlite":
                    _copy_pinned(database, clear)
                    database.snapshot.close()  # type: ignore[union-attr]
                    advance(Path(database.location).stat().st_size)
                if sealer is None:
                    entries.append(_entry(database.target, clear))
                else:
                    entries.append(_sealed(clear, staging, database.target, sealer, lambda _n: None))
                    clear.unlink()
        for source, relative in files:
            with contextlib.suppress(FileNotFoundError):  # removed meanwhile (an expired object)
                if sealer is None:
                    digest = copy_hashing(source, staging / relative, advance)
                    size = (staging / relative).stat().st_size
                    entries.append({"path": relative, "size": size, "sha256": digest})
                else:
                    entries.append(_sealed(source, staging, relative, sealer, advance))
        manifest = {
            "format": FORMAT,
            "applianceVersion": __version__,
            "createdAt": created_at,
            "sqliteVersion": sqlite3.sqlite_version,
            "encryption": sealer.header if sealer is not None else None,
            "databases": {
                d.name: {
                    "backend": d.backend,
                    "path": d.target,
                    "schemaVersion": d.schema_version,
                    **({"rowCounts": d.row_counts} if d.row_counts is not None else {}),
                }
                for d in databases
            },
            "chainHeights": heights,
            "objects": "s3 (not in this backup)" if settings.s3_endpoint else "local",
            "links": routing_link(data_dir),
            "custodyKey": custody_key_in_backup(data_dir),
            "outbox": "left out (sent mail holds live links)",
            "files": sorted(entries, key=lambda e: e["path"]),
        }
        if sealer is not None:
            manifest[MAC] = sealer.mac(manifest)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        _fsync_tree(staging)
        if out.exists():
            out.rmdir()
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if sealer is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    manifest["seconds"] = round(time.monotonic() - started, 3)
    return manifest


def remove_stale_scratch(data_dir: Path) -> list[Path]:
    """Remove the clear snapshots a killed backup left in the data directory (``.backup-PID`` of
    a process that no longer runs): they would otherwise sit there, as large as the databases."""
    removed = []
    for scratch in data_dir.glob(f"{SCRATCH_PREFIX}*"):
        pid = scratch.name[len(SCRATCH_PREFIX) :]
        if not pid.isdigit() or not scratch.is_dir() or _process_runs(int(pid)):
            continue
        shutil.rmtree(scratch, ignore_errors=True)
        removed.append(scratch)
    return removed


def _process_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it runs
        return True
    return True


def _sealed(source: Path, staging: Path, relative: str, sealer: Sealer, advance: Progress) -> dict[str, Any]:
    """Seal ``source`` into the backup at ``relative`` (its label: a file cannot be moved to
    another path); its manifest entry describes the file as stored."""
    size, digest = seal_file(source, staging / relative, sealer, relative, advance)
    return {"path": relative, "size": size, "sha256": digest}


def chain_heights(settings: Settings) -> dict[str, int | None]:
    """Each configured chain's head block number (None for a chain that does not answer now).
    A restored engine scans its wallets' transactions from these heights (outgoing.fencing)."""
    from appliance.engine.chain.base import ChainError
    from appliance.engine.chain.registry import build_chains

    try:
        chains = build_chains(settings)
    except (ChainError, OSError, ValueError):
        return {}
    heights: dict[str, int | None] = {}
    try:
        for chain_id, chain in chains.chains.items():
            try:
                heights[chain_id] = chain.head().number
            except (ChainError, OSError):
                heights[chain_id] = None
    finally:
        chains.close()
    return heights


def _entry(relative: str, path: Path) -> dict[str, Any]:
    return {"path": relative, "size": path.stat().st_size, "sha256": sha256_of(path)}


# -- restore -------------------------------------------------------------------------------------


def known_schema_versions() -> dict[str, int]:
    from appliance.common.migrate import discover

    return {
        name: max((m.version for m in discover(package)), default=0) for name, package in MIGRATIONS.items()
    }


def read_manifest(source: Path) -> dict[str, Any]:
    path = Path(source) / MANIFEST
    if not path.is_file():
        raise BackupError(f"{source} is not a backup: {MANIFEST} is missing")
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise BackupError(f"{path} is not a readable manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in READABLE_FORMATS:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise BackupError(
            f"{path}: backup format {found!r} is not one this appliance reads {READABLE_FORMATS}"
        )
    for entry in manifest.get("files", []):
        relative = Path(str(entry.get("path", "")))
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise BackupError(f"{path}: file path {entry.get('path')!r} leaves the backup")
    return manifest


def check_schema(manifest: dict[str, Any]) -> None:
    known = known_schema_versions()
    for name, limit in known.items():
        version = (manifest["databases"].get(name) or {}).get("schemaVersion")
        if version is None:
            raise BackupError(f"the backup holds no {name} database")
        if int(version) > limit:
            raise BackupError(
                f"the backup's {name} schema is version {version}, newer than this appliance knows "
                f"({limit}): restore it with the appliance version that made it "
                f"({manifest.get('applianceVersion')})"
            )


def _ensure_empty(target: Path) -> None:
    if target.exists():
        if not target.is_dir():
            raise BackupError(f"{target} is not a directory")
        if any(target.iterdir()):
            raise BackupError(f"{target} is not empty: restore only into a new or empty directory")
    target.mkdir(parents=True, exist_ok=True, mode=0o700)


def _check_pg_target(url: str, name: str) -> None:
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
            (tables,) = cursor.fetchone()
    finally:
        connection.close()
    if tables:
        raise BackupError(f"the {name} database at the target is not empty: restore only into an empty one")
    if shutil.which("pg_restore") is None:
        raise BackupError("pg_restore is not installed")


def _pg_restore(dump: Path, url: str, name: str) -> None:
    dsn, env = libpq_command(url)
    done = subprocess.run(
        ["pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "--dbname", dsn, str(dump)],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise BackupError(f"pg_restore of {name} failed: {done.stderr.strip().splitlines()[-1:]}")


def is_encrypted(manifest: dict[str, Any]) -> bool:
    return manifest.get("encryption") is not None


def unlock_backup(manifest: dict[str, Any], unlock: Unlock) -> Sealer | None:
    """The sealer of an encrypted backup (its manifest's MAC checked), None for a clear one."""
    header = manifest.get("encryption")
    if header is None:
        if unlock.expects_encryption:
            raise BackupLocked(
                "the backup is not encrypted, although a passphrase or identity was given: it may "
                "have been replaced by someone who can write where backups are kept; restore it "
                "only if you wrote it in the clear yourself (--allow-unencrypted)"
            )
        return None
    try:
        sealer = Sealer.open(header, passphrase=unlock.passphrase, identities=unlock.identities)
    except SealingError as exc:
        raise BackupLocked(f"the backup is encrypted and cannot be opened: {exc}") from None
    try:
        sealer.check_mac({k: v for k, v in manifest.items() if k != MAC}, manifest.get(MAC))
    except SealingError as exc:
        raise BackupError(f"the backup is damaged: {exc}") from None
    return sealer


def restore_backup(
    source: Path,
    target: Path,
    settings_for: Callable[[Path], Settings],
    *,
    unlock: Unlock = Unlock(),
    progress: Callable[[int], Progress] = lambda _total: lambda _n: None,
) -> dict[str, Any]:
    """Restore the backup in ``source`` into the empty directory ``target``.

    An encrypted backup is opened with ``unlock`` first: a wrong passphrase or identity, or an
    altered manifest, stops before anything is written. Every file is checked against the
    manifest while it is copied (and opened); any difference (or a schema newer than this binary)
    stops the restore and removes what it wrote. ``settings_for(target)`` gives the settings the
    restored install will run with (after its appliance.toml is back): a service on PostgreSQL
    there is restored into its (empty) database with pg_restore."""
    source, target = Path(source), Path(target)
    started = time.monotonic()
    manifest = read_manifest(source)
    check_schema(manifest)
    sealer = unlock_backup(manifest, unlock)
    _ensure_empty(target)
    try:
        advance = progress(sum(int(e["size"]) for e in manifest["files"]))
        for entry in manifest["files"]:
            origin = source / entry["path"]
            if not origin.is_file():
                raise BackupError(f"{entry['path']} is missing from the backup")
            _restore_file(origin, target, entry, sealer, advance)
        for link, name in manifest.get("links", {}).items():
            os.symlink(name, target / link)
        settings = settings_for(target)
        restored = _restore_databases(manifest, target, settings)
        _record_chain_heights(manifest, target)
        _fsync_tree(target)
    except BaseException:
        for child in target.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        raise
    return {
        "dataDir": str(target.resolve()),
        **restored,
        "encryption": None if sealer is None else sealer.header["scheme"],
        "files": len(manifest["files"]),
        "bytes": sum(int(e["size"]) for e in manifest["files"]),
        "createdAt": manifest["createdAt"],
        "seconds": round(time.monotonic() - started, 3),
    }


def _restore_file(
    origin: Path, target: Path, entry: dict[str, Any], sealer: Sealer | None, advance: Progress
) -> None:
    damaged = f"{entry['path']} does not match its checksum in the manifest: the backup is damaged"
    if sealer is None:
        digest = copy_hashing(origin, target / entry["path"], advance)
        size = (target / entry["path"]).stat().st_size
    else:
        try:
            size, digest = open_file(origin, target / entry["path"], sealer, entry["path"], advance)
        except SealingError:
            raise BackupError(f"{damaged} or was altered") from None
    if digest != entry["sha256"] or size != entry["size"]:
        raise BackupError(damaged)


def _record_chain_heights(manifest: dict[str, Any], target: Path) -> None:
    """The restore reconciliation hook: the backup's chain heights, for the engine's nonce fencing
    to match its unfinished payouts against the chain before it signs anything (a backup made
    before heights were recorded leaves none: the fencing then stops signing instead)."""
    from appliance.engine.outgoing.fencing import CHECKPOINTS

    heights = manifest.get("chainHeights")
    if not heights:
        return
    document = {"backupCreatedAt": manifest.get("createdAt"), "chainHeights": heights}
    fd = os.open(target / CHECKPOINTS, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(document, indent=2) + "\n")


def _restore_databases(manifest: dict[str, Any], target: Path, settings: Settings) -> dict[str, Any]:
    """Check every database's target first (so that a refusal restores nothing), then restore."""
    urls = {"dispatch": settings.dispatch_db_url, "engine": settings.engine_db_url}
    for name, url in urls.items():
        entry = manifest["databases"][name]
        wanted_sqlite = _sqlite_path(url)
        if entry["backend"] == "sqlite":
            if wanted_sqlite is None:
                raise BackupError(
                    f"the backup's {name} database is SQLite but the target's settings name PostgreSQL"
                )
            if wanted_sqlite.resolve() != (target / entry["path"]).resolve():
                raise BackupError(
                    f"the target's settings put the {name} database elsewhere ({wanted_sqlite})"
                )
        elif wanted_sqlite is not None:
            raise BackupError(
                f"the backup's {name} database is PostgreSQL: set {name}_database for the target"
            )
        else:
            _check_pg_target(url, name)
    restored: dict[str, Any] = {}
    for name, url in urls.items():
        entry = manifest["databases"][name]
        copied = target / entry["path"]
        if entry["backend"] == "sqlite":
            with contextlib.closing(sqlite3.connect(copied)) as conn:
                check = conn.execute("PRAGMA quick_check").fetchone()[0]
                version = _schema_version(conn)
            if check != "ok" or version != entry["schemaVersion"]:
                raise BackupError(f"the restored {name} database is not the one the manifest describes")
        else:
            _pg_restore(copied, url, name)
            copied.unlink()
            version = _pg_schema_version(url)
        restored[name] = {"schemaVersion": version, "backend": entry["backend"]}
    return restored
