import importlib
import sys
from pathlib import Path

import peewee
import pytest

from appliance.common import migrate
from appliance.common.db import make_database
from tests.conftest import empty_postgres


def _database(kind: str, tmp_path: Path, name: str = "m") -> peewee.Database:
    if kind == "sqlite":
        return make_database(f"sqlite:///{tmp_path / name}.db")
    return empty_postgres()


BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture
def migration_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "pkgs"
    package = root / "trial_migrations"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "0001_first.py").write_text(
        "def up(db):\n    db.execute_sql('CREATE TABLE first_table (id INTEGER PRIMARY KEY, name TEXT)')\n"
    )
    monkeypatch.syspath_prepend(str(root))
    yield package
    for name in [n for n in sys.modules if n.startswith("trial_migrations")]:
        del sys.modules[name]
    importlib.invalidate_caches()


@pytest.mark.parametrize("kind", BACKENDS)
def test_every_service_migrates_from_empty_and_a_second_run_changes_nothing(
    kind: str, tmp_path: Path
) -> None:
    for package in ("migrations.dispatch", "migrations.engine"):
        db = _database(kind, tmp_path, package.split(".")[1])
        assert migrate.apply(db, package)
        assert migrate.apply(db, package) == []
        assert migrate.is_current(db, package)
        db.close()


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_failing_migration_leaves_the_database_as_it_was(
    kind: str, tmp_path: Path, migration_package: Path
) -> None:
    (migration_package / "0002_broken.py").write_text(
        "def up(db):\n"
        "    db.execute_sql('CREATE TABLE second_table (id INTEGER PRIMARY KEY)')\n"
        "    db.execute_sql('INSERT INTO no_such_table VALUES (1)')\n"
    )
    db = _database(kind, tmp_path)
    with pytest.raises(migrate.MigrationError, match="0002_broken"):
        migrate.apply(db, "trial_migrations")
    with db.connection_context():
        tables = set(db.get_tables())
        assert "first_table" in tables
        assert "second_table" not in tables
        assert migrate.schema_version(db) == 1
    db.close()


def test_migrations_run_in_number_order(tmp_path: Path, migration_package: Path) -> None:
    (migration_package / "0003_third.py").write_text(
        "def up(db):\n    db.execute_sql(\"INSERT INTO first_table (name) VALUES ('third')\")\n"
    )
    (migration_package / "0002_second.py").write_text(
        "def up(db):\n    db.execute_sql('ALTER TABLE first_table ADD COLUMN extra TEXT')\n"
    )
    db = _database("sqlite", tmp_path)
    assert migrate.apply(db, "trial_migrations") == ["0001_first", "0002_second", "0003_third"]
    db.close()


def test_two_migrations_with_one_number_are_refused(tmp_path: Path, migration_package: Path) -> None:
    (migration_package / "0001_again.py").write_text("def up(db):\n    pass\n")
    with pytest.raises(migrate.MigrationError, match="share a number"):
        migrate.discover("trial_migrations")


def test_sqlite_databases_use_wal_and_enforce_foreign_keys(tmp_path: Path) -> None:
    db = make_database(f"sqlite:///{tmp_path / 'p.db'}")
    with db.connection_context():
        assert db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
        assert db.execute_sql("PRAGMA busy_timeout").fetchone()[0] == 10000
    db.close()


@pytest.mark.postgres
def test_two_nodes_starting_together_on_postgresql_migrate_once_without_failing(
    migration_package: Path,
) -> None:
    """Two nodes' `serve` on one database: the second migrator waits for the first (it used to
    run the same migration beside it and fail on the table the first was creating)."""
    import threading

    gate = migration_package.parent / "trial_gate.py"
    gate.write_text("import threading\ninside = threading.Event()\ngo = threading.Event()\n")
    (migration_package / "0001_first.py").write_text(
        "import trial_gate\n"
        "def up(db):\n"
        "    db.execute_sql('CREATE TABLE first_table (id INTEGER PRIMARY KEY, name TEXT)')\n"
        "    trial_gate.inside.set()\n"
        "    trial_gate.go.wait(30)\n"
    )
    import trial_gate  # type: ignore[import-not-found]

    db = empty_postgres()
    results: dict[str, object] = {}

    def node(name: str) -> None:
        try:
            results[name] = migrate.apply(db, "trial_migrations")
        except migrate.MigrationError as exc:
            results[name] = exc

    first = threading.Thread(target=node, args=("first",))
    first.start()
    assert trial_gate.inside.wait(30)
    second = threading.Thread(target=node, args=("second",))
    second.start()
    with db.connection_context():  # the second node is waiting on a lock before the first commits
        for _ in range(300):
            waiting = db.execute_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            ).fetchone()[0]
            if waiting:
                break
            threading.Event().wait(0.05)
    trial_gate.go.set()
    first.join(30)
    second.join(30)
    del sys.modules["trial_gate"]
    assert results == {"first": ["0001_first"], "second": []}
    with db.connection_context():
        assert migrate.schema_version(db) == 1
    db.close_all()
