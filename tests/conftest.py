"""Shared fixtures: a fresh app per test on databases copied from a pre-migrated template.

Migrating once per test session and copying the files keeps each test isolated and fast. Set
APPLIANCE_TEST_POSTGRES=postgresql://… to run the tests marked ``postgres`` against a real server.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import peewee
import pytest

from appliance.common import clock
from appliance.common import migrate as migrations
from appliance.common.db import make_database
from appliance.settings import Settings, load_settings

TEMPLATE_FILES = ("dispatch.db", "engine.db", "appliance.key")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key in list(os.environ):
        if key.startswith("APPLIANCE_") and not key.startswith("APPLIANCE_TEST_"):
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


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    return load_settings({"data_dir": str(data_dir)}, environ={})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def postgres_url() -> str | None:
    return os.environ.get("APPLIANCE_TEST_POSTGRES") or None


def empty_postgres() -> peewee.Database:
    """A database on the test PostgreSQL server with an empty public schema (skips without one)."""
    url = postgres_url()
    if not url:
        pytest.skip("APPLIANCE_TEST_POSTGRES is not set")
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
        return postgres_url() or ""

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
