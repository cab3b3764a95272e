"""Shared fixtures: a fresh app per test on databases copied from a pre-migrated template.

Migrating once per test session and copying the files keeps each test isolated and fast. Set
APPLIANCE_TEST_POSTGRES=postgresql://… to run the tests marked ``postgres`` against a real server.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import socket
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import peewee
import pytest
from argon2 import PasswordHasher

from appliance.common import clock, passwords
from appliance.common import migrate as migrations
from appliance.common.db import make_database
from appliance.settings import Settings, load_settings

TEMPLATE_FILES = ("dispatch.db", "engine.db", "appliance.key")

# Passwords hashed and verified in the test processes with argon2id at its lowest cost: at the
# production parameters (64 MiB, 3 passes, 4 lanes) each hash or verification is 0.18 s of CPU,
# and the suite makes about 150 of them per run on each backend. Servers and commands a test starts
# hash at the production cost (a hash carries its parameters, so either verifies the other's);
# test_passwords checks the production parameters with ``production_password_hashing``.
PRODUCTION_PASSWORD_HASHING = (passwords._hasher, passwords._PLACEHOLDER)
passwords._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
passwords._PLACEHOLDER = passwords._hasher.hash("placeholder-password-for-timing")


@pytest.fixture
def production_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    hasher, placeholder = PRODUCTION_PASSWORD_HASHING
    monkeypatch.setattr(passwords, "_hasher", hasher)
    monkeypatch.setattr(passwords, "_PLACEHOLDER", placeholder)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Every APPLIANCE_ variable, the tests' own included (read once at import below): a command
    # or server a test starts must see only what the test gives it.
    for key in list(os.environ):
        if key.startswith("APPLIANCE_") and key != "APPLIANCE_TEST_TIMING":
            monkeypatch.delenv(key)
    clock.reset()
    yield
    clock.reset()


@pytest.fixture(scope="session")
def template_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory migrated once per test session."""
    directory = tmp_path_factory.mktemp("template")
    for name, package in (("dispatch.db", "migrations.dispatch"), ("engine.db", "migrations.engine")):
        db = make_database(f"sqlite:///{directory / name}")
        migrations.apply(db, package)
        db.close_all() if hasattr(db, "close_all") else db.close()
        # Fold the WAL into the main file so that copying one file copies everything.
        with sqlite3.connect(directory / name) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode=DELETE")
    from appliance.common.keys import load_or_create_master_key

    load_or_create_master_key(directory)
    return directory


@pytest.fixture
def data_dir(tmp_path: Path, template_dir: Path) -> Path:
    directory = tmp_path / "data"
    directory.mkdir()
    for name in TEMPLATE_FILES:
        shutil.copy2(template_dir / name, directory / name)
    return directory


# The backend the whole suite runs on: sqlite (default) or postgres (APPLIANCE_TEST_BACKEND=postgres
# with APPLIANCE_TEST_POSTGRES set; `make test-postgres-all`). On PostgreSQL each test gets its
# own pair of databases copied from templates migrated once per test process.
BACKEND = os.environ.get("APPLIANCE_TEST_BACKEND", "sqlite")


_admin_connections = threading.local()


def _admin(sql: str) -> None:
    """One statement on the test server's admin database, on a connection each thread keeps (the
    PostgreSQL run makes and drops two databases per test: a connection each was a server process
    started and its catalogs read each time)."""
    import psycopg2

    connection = getattr(_admin_connections, "connection", None)
    if connection is None or connection.closed:
        connection = psycopg2.connect(postgres_url())
        connection.autocommit = True
        _admin_connections.connection = connection
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
    except (psycopg2.OperationalError, psycopg2.InterfaceError):
        connection.close()  # a server restarted under it: the next statement connects afresh
        raise


@functools.cache
def _copy_strategy() -> str:
    """PostgreSQL 15 and later copy a template by writing every page of it to the WAL (WAL_LOG);
    FILE_COPY copies its files, about half the time on this throwaway server (no fsync)."""
    import psycopg2

    with contextlib.closing(psycopg2.connect(postgres_url())) as connection, connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        (version,) = cursor.fetchone()
    return " STRATEGY FILE_COPY" if int(version) >= 150000 else ""


def _database_url(name: str) -> str:
    base = urlsplit(postgres_url() or "")
    return urlunsplit(base._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def postgres_templates() -> dict[str, str]:
    """Template databases of both services, migrated once per test process."""
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    names = {}
    for service, package in (("dispatch", "migrations.dispatch"), ("engine", "migrations.engine")):
        name = f"tmpl_{service}_{worker}"
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        _admin(f"CREATE DATABASE {name}")
        db = make_database(_database_url(name))
        migrations.apply(db, package)
        db.close_all()
        names[service] = name
    return names


@pytest.fixture
def settings(data_dir: Path, request: pytest.FixtureRequest) -> Iterator[Settings]:
    values = {"data_dir": str(data_dir)}
    created: list[str] = []
    if BACKEND == "postgres":
        if not postgres_url():
            pytest.exit("APPLIANCE_TEST_BACKEND=postgres needs APPLIANCE_TEST_POSTGRES")
        templates = request.getfixturevalue("postgres_templates")
        strategy = _copy_strategy()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        for service, template in templates.items():
            name = f"t_{service}_{worker}_{next(_database_numbers)}"
            _admin(f"CREATE DATABASE {name} TEMPLATE {template}{strategy}")
            created.append(name)
            values[f"{service}_database"] = _database_url(name)
        # Servers and commands a test starts on this data directory find the same databases.
        lines = [f'{key} = "{values[key]}"' for key in ("dispatch_database", "engine_database")]
        (data_dir / "appliance.toml").write_text("\n".join(lines) + "\n")
    yield load_settings(values, environ={})
    for name in created:
        _dropper.drop(name)


_database_numbers = itertools.count()


class _Dropper:
    """Drops a finished test's databases on a thread of its own: DROP DATABASE … WITH (FORCE) waits
    in steps of 100 ms for the connections it ends to go (an app's pool is still open when its test
    ends), which the next test need not wait for. The session's end waits for the last drops."""

    def __init__(self) -> None:
        self._names: list[str] = []
        self._cond = threading.Condition()
        self._busy = False
        self._thread: threading.Thread | None = None

    def drop(self, name: str) -> None:
        with self._cond:
            self._names.append(name)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="drop-test-databases", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._names:
                    self._busy = False
                    self._cond.notify_all()
                    self._cond.wait()
                name = self._names.pop(0)
                self._busy = True
            with contextlib.suppress(Exception):  # the server's end drops it anyway
                _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def wait(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._names and not self._busy, timeout=120)


_dropper = _Dropper()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _dropper.wait()
    browsers = sys.modules.get("tests.e2e.console_server")
    if browsers is not None:  # the browser tests' shared Chromium (tests/e2e/console_server.py)
        browsers.stop_chromium()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_command(data_dir: Path, dispatch_port: int, engine_port: int, *extra: str) -> list[str]:
    """The command line of a real `appliance serve` on ``data_dir`` and the two ports."""
    return [
        sys.executable,
        "-m",
        "appliance",
        "serve",
        "--data-dir",
        str(data_dir),
        "--dispatch-port",
        str(dispatch_port),
        "--engine-port",
        str(engine_port),
        *extra,
    ]


@pytest.fixture
def dispatch_app(settings: Settings):
    from appliance.dispatch.app import create_app

    app = create_app(settings)
    app.testing = True
    return app


@pytest.fixture
def dispatch_client(dispatch_app):
    return dispatch_app.test_client()


@pytest.fixture
def engine_app(settings: Settings):
    from appliance.engine.app import create_app

    app = create_app(settings)
    app.testing = True
    return app


@pytest.fixture
def engine_client(engine_app):
    return engine_app.test_client()


_POSTGRES_URL = os.environ.get("APPLIANCE_TEST_POSTGRES") or None


def postgres_url() -> str | None:
    return _POSTGRES_URL


_scratch: dict[str, str] = {}


def _scratch_url() -> str:
    """This test process's own scratch database on the test server, made at first use: the xdist
    workers of `make test-postgres-all` each empty theirs, never one another's (a shared one was
    dropped under a test running on the other worker)."""
    if "url" not in _scratch:
        name = f"scratch_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        _admin(f"CREATE DATABASE {name}")
        _scratch["url"] = _database_url(name)
    return _scratch["url"]


def empty_postgres() -> peewee.Database:
    """A database on the test PostgreSQL server with an empty public schema (skips without one)."""
    if not postgres_url():
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set")
    url = _scratch_url()
    db = make_database(url)
    with db.connection_context():
        db.execute_sql("DROP SCHEMA public CASCADE")
        db.execute_sql("CREATE SCHEMA public")
    return db


@pytest.fixture
def migrated_postgres() -> Callable[[str], str]:
    """The one way a test gets a service's database on PostgreSQL: ``migrated_postgres(package)``
    empties the test server's database, applies that package's migrations and returns the URL to
    put in the settings (the test skips without APPLIANCE_TEST_POSTGRES)."""

    def migrated(package: str) -> str:
        db = empty_postgres()
        migrations.apply(db, package)
        db.close_all()
        return _scratch_url()

    return migrated


@pytest.fixture(scope="session")
def yerevan_pbf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Monaco's real roads moved onto Yerevan (see tests/data/README.md)."""
    from tests.geo_fixtures import DATA, translate_extract

    return translate_extract(DATA / "monaco.osm.pbf", tmp_path_factory.mktemp("geo") / "yerevan.osm.pbf")


@pytest.fixture(scope="session")
def road_data(tmp_path_factory: pytest.TempPathFactory, yerevan_pbf: Path) -> Path:
    """A data directory's routing/ folder built once per session with the real OSRM tools."""
    from appliance.dispatch.routing.build import build, routing_dir

    directory = tmp_path_factory.mktemp("roads")
    build(yerevan_pbf, directory, progress=lambda _line: None)
    return routing_dir(directory)


@pytest.fixture
def routed_data_dir(data_dir: Path, road_data: Path) -> Path:
    """The per-test data directory with the session's road data in place."""
    (data_dir / "routing").symlink_to(road_data, target_is_directory=True)
    return data_dir


@contextlib.contextmanager
def serving(wsgi_app, threads: int = 8) -> Iterator[str]:
    """Serve ``wsgi_app`` with waitress on a free loopback port in a thread; stop it cleanly."""
    from waitress import wasyncore
    from waitress.server import create_server

    server = create_server(wsgi_app, host="127.0.0.1", port=0, threads=threads)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=2)
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        thread.join(5)


@pytest.fixture(scope="session")
def map_tiles(tmp_path_factory: pytest.TempPathFactory, yerevan_pbf: Path) -> Path:
    """tiles.mbtiles built once per session with the real tilemaker."""
    import shutil as _shutil

    from appliance.dispatch.tiles.build import build, tiles_path

    if _shutil.which("tilemaker") is None:
        pytest.skip(
            "tilemaker is not installed (Debian package tilemaker; .ci/system-packages.sh installs it)"
        )
    directory = tmp_path_factory.mktemp("tiles")
    build(yerevan_pbf, directory, progress=lambda _line: None)
    return tiles_path(directory)


@pytest.fixture
def mapped_data_dir(routed_data_dir: Path, map_tiles: Path) -> Path:
    """The per-test data directory with the session's roads and map tiles in place."""
    (routed_data_dir / "tiles.mbtiles").symlink_to(map_tiles)
    return routed_data_dir


def _reaches_a_database(item: pytest.Item) -> bool:
    fixtures = getattr(item, "fixturenames", ())
    return (
        "settings" in fixtures
        or "migrated_postgres" in fixtures
        or item.get_closest_marker("postgres") is not None
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The whole suite on PostgreSQL (`make test-postgres-all`) runs the tests that reach a
    database: those built on the `settings` fixture (the app, the commands and the servers they
    start get the run's PostgreSQL databases) or on `migrated_postgres`, and those marked
    ``postgres``. The others (parsers, the planner, the launcher, SSRF ranges…) open no database,
    so they ran the same under `make test` and are not run twice."""
    if BACKEND != "postgres":
        return
    kept = [item for item in items if _reaches_a_database(item)]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if not _reaches_a_database(item)])
        items[:] = kept


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per group of skipped tests, naming why and where (`make test` ends with them,
    before pytest's count): a newcomer sees at once which system package or server is missing
    (.ci/system-packages.sh installs the packages; README.md, Start here)."""
    groups: dict[str, list[str]] = {}
    for report in terminalreporter.stats.get("skipped", []):
        reason = "no reason given"
        if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
            reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        groups.setdefault(reason, []).append(report.nodeid.split("::")[0])
    if not groups:
        return
    terminalreporter.write_sep("-", "skipped tests, by reason")
    for reason, files in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        where = sorted(set(files))
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more files" if len(where) > 3 else "")
        count = len(files)
        terminalreporter.write_line(f"{count} test{'s' if count != 1 else ''} skipped: {reason} ({shown})")
