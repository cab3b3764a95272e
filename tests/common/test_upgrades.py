"""Safe upgrades (appliance/upgrades.py) from the previous release's databases, kept as fixtures in
tests/data/previous_release/ (made by release af66f5b's own `init`, `company create` and `operator
create`; README there): one migrator at a time, a backup before the first migration, a dry run that
changes nothing, and a database from a newer appliance refused."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from appliance.backup import Unlock, read_manifest, restore_backup
from appliance.settings import load_settings
from tests.conftest import BACKEND, _admin, _database_url, postgres_url

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "previous_release"
PREVIOUS = {"dispatch": 16, "engine": 15}  # the schema versions of release af66f5b
ROOT = Path(__file__).resolve().parents[2]


def appliance(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=environment,
    )


def previous_release(data_dir: Path) -> Path:
    """A data directory as release af66f5b left it on SQLite."""
    data_dir.mkdir(mode=0o700)
    shutil.copy(FIXTURE / "appliance.key", data_dir / "appliance.key")
    for service in PREVIOUS:
        with sqlite3.connect(data_dir / f"{service}.db") as db:
            db.executescript((FIXTURE / f"{service}.sqlite.sql").read_text())
    return data_dir


def schema_of(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]


def latest(service: str) -> int:
    return max(int(p.name[:4]) for p in (ROOT / "migrations" / service).glob("[0-9][0-9][0-9][0-9]_*.py"))


sqlite_only = pytest.mark.skipif(BACKEND != "sqlite", reason="the SQLite files of a data directory")


@sqlite_only
def test_a_dry_run_lists_what_the_upgrade_would_apply_and_changes_nothing(tmp_path: Path) -> None:
    data = previous_release(tmp_path / "data")
    result = appliance("migrate", "--dry-run", "--json", "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["dispatch"]["schemaVersion"] == 16 and plan["engine"]["schemaVersion"] == 15
    assert plan["dispatch"]["pending"][0].startswith("0017_")
    assert plan["engine"]["pending"][0].startswith("0016_")
    assert plan["backupFirst"] is True
    assert {service: schema_of(data / f"{service}.db") for service in PREVIOUS} == PREVIOUS
    assert not (data / "upgrade-backups").exists()


@sqlite_only
def test_an_upgrade_backs_the_install_up_first_and_restoring_that_backup_rolls_it_back(
    tmp_path: Path,
) -> None:
    data = previous_release(tmp_path / "data")
    result = appliance("migrate", "--json", "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    migrated = json.loads(result.stdout)
    assert set(migrated) == {"dataDir", "dispatch", "engine"}  # the contract's shape, unchanged
    assert migrated["dispatch"]["schemaVersion"] == latest("dispatch")
    assert migrated["engine"]["schemaVersion"] == latest("engine")
    assert "backed up the data directory to" in result.stderr
    (taken,) = (data / "upgrade-backups").iterdir()
    manifest = read_manifest(taken)
    assert {name: manifest["databases"][name]["schemaVersion"] for name in PREVIOUS} == PREVIOUS

    # What was there before is still there, and a second run takes no second backup.
    companies = appliance("company", "list", "--json", "--data-dir", str(data))
    assert [c["name"] for c in json.loads(companies.stdout)["companies"]] == ["Arev Express"]
    operators = appliance("operator", "list", "--json", "--data-dir", str(data))
    assert [o["operatorId"] for o in json.loads(operators.stdout)["operators"]] == ["op_previousrelease"]
    assert appliance("migrate", "--data-dir", str(data)).returncode == 0
    assert len(list((data / "upgrade-backups").iterdir())) == 1

    # Rolling back is restoring the backup: the previous release's schema, whole.
    back = tmp_path / "rolled-back"
    restore_backup(
        taken, back, lambda where: load_settings({"data_dir": str(where)}, environ={}), unlock=Unlock()
    )
    assert {service: schema_of(back / f"{service}.db") for service in PREVIOUS} == PREVIOUS


@sqlite_only
def test_two_migrators_started_together_on_one_data_directory_back_up_and_migrate_once(
    tmp_path: Path,
) -> None:
    data = previous_release(tmp_path / "data")
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: appliance("migrate", "--data-dir", str(data)), range(2)))
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    assert sum("backed up" in r.stderr for r in results) == 1
    assert len(list((data / "upgrade-backups").iterdir())) == 1
    assert schema_of(data / "engine.db") == latest("engine")


@sqlite_only
def test_a_database_migrated_by_a_newer_appliance_is_refused_in_one_line(tmp_path: Path) -> None:
    data = previous_release(tmp_path / "data")
    assert appliance("migrate", "--data-dir", str(data)).returncode == 0
    with sqlite3.connect(data / "engine.db") as db:
        db.execute("INSERT INTO schema_migrations VALUES (9001, '9001_from_the_future', '2027-01-01')")
    for command in (("migrate",), ("operator", "list"), ("migrate", "--dry-run")):
        result = appliance(*command, "--data-dir", str(data))
        assert result.returncode == 1, result
        (line,) = result.stderr.splitlines()
        assert "engine database is at schema 9001, newer than this appliance knows" in line
        assert "Traceback" not in result.stderr


def _previous_release_on_postgres(name: str) -> dict[str, str]:
    """The previous release's PostgreSQL databases (pg_dump of its own `init`), loaded with psql."""
    urls = {}
    for service in PREVIOUS:
        database = f"{name}_{service}"
        _admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        _admin(f"CREATE DATABASE {database}")
        urls[service] = _database_url(database)
        loaded = subprocess.run(
            [
                "psql",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-d",
                urls[service],
                "-f",
                str(FIXTURE / f"{service}.postgres.sql"),
            ],
            capture_output=True,
            text=True,
        )
        assert loaded.returncode == 0, loaded.stderr
    return urls


@pytest.mark.postgres
def test_two_nodes_on_postgresql_upgrade_the_previous_release_once_with_one_backup_first(
    tmp_path: Path,
) -> None:
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set")
    urls = _previous_release_on_postgres(f"upgrade_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}")
    nodes = []
    for node in ("a", "b"):
        data = tmp_path / node
        data.mkdir(mode=0o700)
        shutil.copy(FIXTURE / "appliance.key", data / "appliance.key")
        nodes.append(data)
    env = {"APPLIANCE_DISPATCH_DATABASE": urls["dispatch"], "APPLIANCE_ENGINE_DATABASE": urls["engine"]}
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda d: appliance("migrate", "--json", "--data-dir", str(d), **env), nodes))
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    assert sum("backed up" in r.stderr for r in results) == 1
    backups = [
        b for d in nodes if (d / "upgrade-backups").is_dir() for b in (d / "upgrade-backups").iterdir()
    ]
    assert len(backups) == 1
    manifest = read_manifest(backups[0])
    assert {name: manifest["databases"][name]["schemaVersion"] for name in PREVIOUS} == PREVIOUS
    import psycopg2

    for service in PREVIOUS:
        with psycopg2.connect(urls[service]) as connection, connection.cursor() as cursor:
            cursor.execute(
                "SELECT version, count(*) FROM schema_migrations GROUP BY version HAVING count(*) > 1"
            )
            assert cursor.fetchall() == []
            cursor.execute("SELECT max(version) FROM schema_migrations")
            assert cursor.fetchone()[0] == latest(service)
        connection.close()
    listed = appliance("operator", "list", "--json", "--data-dir", str(nodes[1]), **env)
    assert [o["operatorId"] for o in json.loads(listed.stdout)["operators"]] == ["op_previousrelease"]
