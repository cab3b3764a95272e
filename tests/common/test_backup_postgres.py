"""appliance backup and restore with both services on PostgreSQL: pg_dump, then pg_restore into
the empty databases the target's settings name."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from appliance.backup import BackupError, Unlock, create_backup, restore_backup
from appliance.common.sealing import Sealer
from appliance.settings import load_settings
from tests.conftest import _admin, _database_url, postgres_url

pytestmark = pytest.mark.postgres

_numbers = itertools.count()
UNLOCK = Unlock(passphrase=lambda: "pg backup")


@pytest.fixture
def databases() -> Iterator[Callable[..., str]]:
    """``make(template=None)``: a new database (a copy of the suite's migrated template, or empty)."""
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set")
    created: list[str] = []

    def make(template: str | None = None) -> str:
        name = f"bk_{os.getpid()}_{next(_numbers)}"
        _admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
        created.append(name)
        return _database_url(name)

    yield make
    for name in created:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _settings(data_dir: Path, dispatch: str, engine: str):
    return load_settings(
        {"data_dir": str(data_dir), "dispatch_database": dispatch, "engine_database": engine}, environ={}
    )


def _schema_of(url: str) -> None:
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT max(version) FROM schema_migrations")
    finally:
        connection.close()


def _company_names(url: str) -> list[str]:
    import psycopg2

    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT name FROM company ORDER BY id")
            return [row[0] for row in cursor.fetchall()]
    finally:
        connection.close()


def test_both_services_on_postgresql_are_dumped_and_restored_into_empty_databases(
    databases, postgres_templates, tmp_path: Path
) -> None:
    from appliance.dispatch.app import create_app
    from appliance.dispatch.db import database
    from tests.dispatch.factory import make_company

    source = _settings(
        tmp_path / "data", databases(postgres_templates["dispatch"]), databases(postgres_templates["engine"])
    )
    source.data_dir.mkdir()
    create_app(source)
    with database.connection_context():
        make_company("Arev on PostgreSQL")
    database.close_all()

    manifest = create_backup(source, tmp_path / "backup", sealer=Sealer.with_passphrase("pg backup"))
    assert manifest["databases"]["dispatch"]["backend"] == "postgresql"
    assert {"dispatch.pgdump", "engine.pgdump"} <= {entry["path"] for entry in manifest["files"]}
    assert manifest["databases"]["dispatch"]["schemaVersion"] >= 9

    dispatch_target, engine_target = databases(), databases()
    result = restore_backup(
        tmp_path / "backup",
        tmp_path / "restored",
        lambda target: _settings(target, dispatch_target, engine_target),
        unlock=UNLOCK,
    )
    assert result["dispatch"] == {
        "schemaVersion": manifest["databases"]["dispatch"]["schemaVersion"],
        "backend": "postgresql",
    }
    assert result["engine"]["schemaVersion"] == manifest["databases"]["engine"]["schemaVersion"]
    assert _company_names(dispatch_target) == ["Arev on PostgreSQL"]
    assert not (tmp_path / "restored" / "dispatch.pgdump").exists()

    fresh_dispatch = databases()
    with pytest.raises(BackupError, match="engine database at the target is not empty"):
        restore_backup(
            tmp_path / "backup",
            tmp_path / "again",
            lambda target: _settings(target, fresh_dispatch, engine_target),
            unlock=UNLOCK,
        )
    import psycopg2.errors

    with pytest.raises(psycopg2.errors.UndefinedTable):  # the refusal restored nothing, not even dispatch
        _schema_of(fresh_dispatch)
    with pytest.raises(BackupError, match="is PostgreSQL"):
        restore_backup(
            tmp_path / "backup",
            tmp_path / "sqlite",
            lambda target: load_settings({"data_dir": str(target)}, environ={}),
            unlock=UNLOCK,
        )
