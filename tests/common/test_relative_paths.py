"""Relative paths mean what they say from wherever a command is started (issue 26): the default
data directory ./data, a relative --data-dir, --pbf, --out and restore's PATH are made absolute
once, when read, and nothing below depends on the current directory (osrm-extract runs in its
build folder: a relative path handed to it named nothing). Each test starts the real command in
its own process, in a directory that is neither the project's nor the data's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import BACKEND, free_port

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "monaco.osm.pbf"

pytestmark = pytest.mark.skipif(
    BACKEND != "sqlite", reason="data directories of SQLite files (paths do not depend on the backend)"
)


def appliance(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=env,
    )


def ok(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """The current directory of the commands: tmp_path/work, with the extract in tmp_path/maps."""
    (tmp_path / "work").mkdir()
    (tmp_path / "maps").mkdir()
    shutil.copy(SAMPLE, tmp_path / "maps" / "sample.osm.pbf")
    return tmp_path / "work"


def test_routing_build_with_a_relative_extract_and_data_directory_builds_the_roads(elsewhere: Path) -> None:
    body = ok(
        appliance(
            "routing",
            "build",
            "--pbf",
            "../maps/sample.osm.pbf",
            "--data-dir",
            "data",
            "--json",
            cwd=elsewhere,
        )
    )
    assert body["routing"]["source"] == str(elsewhere.parent / "maps" / "sample.osm.pbf")
    assert (elsewhere / "data" / "routing" / "current" / "map.osrm.hsgr").is_file()


def test_routing_build_uses_the_default_data_directory_of_the_current_directory(elsewhere: Path) -> None:
    ok(appliance("routing", "build", "--pbf", "../maps/sample.osm.pbf", cwd=elsewhere))
    assert (elsewhere / "data" / "routing" / "current" / "build.json").is_file()


@pytest.mark.skipif(shutil.which("tilemaker") is None, reason="tilemaker not found")
def test_map_build_with_a_relative_extract_and_data_directory_builds_the_tiles(elsewhere: Path) -> None:
    body = ok(
        appliance(
            "map", "build", "--pbf", "../maps/sample.osm.pbf", "--data-dir", "d", "--json", cwd=elsewhere
        )
    )
    assert body["tiles"]["source"] == str(elsewhere.parent / "maps" / "sample.osm.pbf")
    assert (elsewhere / "d" / "tiles.mbtiles").is_file()


def test_backup_restore_and_export_download_take_relative_paths(elsewhere: Path) -> None:
    ok(appliance("init", "--data-dir", "data", cwd=elsewhere))
    ok(appliance("operator", "create", "op_relative001", "--data-dir", "data", cwd=elsewhere))

    (elsewhere.parent / "passphrase").write_text("the backup passphrase\n")
    backup = ok(
        appliance(
            "backup", "--out", "../backups/first", "--passphrase-file", "../passphrase", "--data-dir", "data",
            "--json", cwd=elsewhere,
        )
    )  # fmt: skip
    assert backup["path"] == str(elsewhere.parent / "backups" / "first")
    assert (elsewhere.parent / "backups" / "first" / "engine.db").is_file()

    restored = ok(
        appliance(
            "restore", "../backups/first", "--passphrase-file", "../passphrase", "--data-dir", "restored",
            "--json", cwd=elsewhere,
        )
    )  # fmt: skip
    assert restored["dataDir"] == str(elsewhere / "restored")
    listed = ok(appliance("operator", "list", "--data-dir", "restored", "--json", cwd=elsewhere))
    assert [o["operatorId"] for o in listed["operators"]] == ["op_relative001"]

    job = ok(
        appliance(
            "export", "create", "--operator", "op_relative001", "--report-type", "PAYOUTS", "--asset", "ETH",
            "--from", "2026-01-01T00:00:00Z", "--to", "2026-02-01T00:00:00Z", "--job-id", "job_relative01",
            "--data-dir", "restored", "--json", cwd=elsewhere,
        )
    )  # fmt: skip
    assert job["status"] == "COMPLETE", job
    (elsewhere / "out").mkdir()
    ok(
        appliance(
            "export", "download", "--operator", "op_relative001", "job_relative01",
            "--out", "out/payouts.csv", "--data-dir", "restored", cwd=elsewhere,
        )
    )  # fmt: skip
    to_stdout = appliance(
        "export", "download", "--operator", "op_relative001", "job_relative01", "--data-dir", "restored",
        cwd=elsewhere,
    )  # fmt: skip
    assert to_stdout.returncode == 0 and to_stdout.stdout.count("\n") >= 1, to_stdout.stderr
    assert (elsewhere / "out" / "payouts.csv").read_text() == to_stdout.stdout


@pytest.mark.server
def test_the_demo_on_the_default_data_directory_starts_from_any_directory(elsewhere: Path) -> None:
    """`make run` from a fresh clone: `appliance demo` with no --data-dir, so ./data, built from
    the sample streets (osrm-extract in its own folder), until both "listening" lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    process = subprocess.Popen(
        [
            sys.executable, "-m", "appliance", "demo", "--processes", "1",
            "--dispatch-port", str(free_port()), "--engine-port", str(free_port()),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=elsewhere, env=env,
        start_new_session=True,
    )  # fmt: skip
    assert process.stdout is not None
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        # Not a timing assertion: a bound so that a demo that never listens fails instead of hanging.
        deadline = time.monotonic() + 240
        while sum(" listening on " in line for line in list(printed)) < 2:
            assert process.poll() is None, "the demo ended: " + "".join(printed)
            assert time.monotonic() < deadline, "".join(printed)
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGINT)
        status = process.wait(timeout=60)
        reader.join(timeout=10)
    text = "".join(printed)
    assert status == 0, text
    assert "Traceback" not in text
    assert "Roads: built from the sample streets" in text
    assert (elsewhere / "data" / "dispatch.db").is_file() and (elsewhere / "data" / "custody.key").is_file()
    assert (elsewhere / "data" / "routing" / "current" / "map.osrm.hsgr").is_file()


def test_settings_make_the_data_directory_and_every_path_setting_absolute_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appliance.settings import load_settings

    monkeypatch.chdir(tmp_path)
    settings = load_settings(
        {"data_dir": "here/../data"},
        environ={
            "APPLIANCE_ENGINE_DATABASE": "sqlite:///dbs/engine.db",
            "APPLIANCE_WEBHOOK_CA_FILE": "certs/ca.pem",
            "APPLIANCE_SMTP_CA_FILE": "~/smtp-ca.pem",
        },
    )
    assert settings.data_dir == tmp_path / "data"
    assert settings.dispatch_db_url == f"sqlite:///{tmp_path / 'data' / 'dispatch.db'}"
    assert settings.engine_db_url == f"sqlite:///{tmp_path / 'dbs' / 'engine.db'}"
    assert settings.webhook_ca_file == str(tmp_path / "certs" / "ca.pem")
    assert settings.smtp_ca_file == str(Path.home() / "smtp-ca.pem")
    assert load_settings({}, environ={}).data_dir == tmp_path / "data"
    absolute = load_settings({}, environ={"APPLIANCE_ENGINE_DATABASE": "sqlite:////srv/engine.db"})
    assert absolute.engine_db_url == "sqlite:////srv/engine.db"


def test_the_road_build_itself_takes_a_relative_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from appliance.dispatch.routing.build import build

    monkeypatch.chdir(tmp_path)
    info = build(SAMPLE, Path("data"), lambda _line: None)
    assert info["source"] == str(SAMPLE)
    assert (tmp_path / "data" / "routing" / "current" / "map.osrm.hsgr").is_file()
