"""Every command fails in one line: `error: <what happened and what to do>` on standard error,
exit 2 for a usage error and 1 for any other failure, and no traceback unless --debug or
APPLIANCE_DEBUG=1 (docs/operations.md, Commands). Each case runs the real command in its own
process, as a user would."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BACKEND, free_port

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "monaco.osm.pbf"

pytestmark = pytest.mark.skipif(
    BACKEND != "sqlite", reason="SQLite data directories (the failures do not depend on the backend)"
)


def appliance(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd or ROOT,
        env=environment,
    )


def error_line(result: subprocess.CompletedProcess, status: int) -> str:
    """The one line a failure prints (standard error holds nothing else), checked with its status."""
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    return lines[0]


def build_error_line(result: subprocess.CompletedProcess) -> str:
    """A build's failure: its progress lines, then exactly one error line, last."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    errors = [line for line in lines if line.startswith("error")]
    assert errors == [lines[-1]], result.stderr
    return lines[-1]


@pytest.fixture
def initialised(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    assert appliance("init", "--data-dir", str(data)).returncode == 0
    return data


def test_a_missing_input_file_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    line = error_line(appliance("routing", "build", "--pbf", str(tmp_path / "none.osm.pbf")), 2)
    assert "none.osm.pbf" in line and "does not exist" in line and "--help" in line


def test_an_input_that_is_a_directory_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    line = error_line(appliance("map", "build", "--pbf", str(tmp_path), "--data-dir", str(tmp_path / "d")), 2)
    assert "is a directory" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000 all the same")
def test_an_unreadable_input_file_is_a_usage_error_in_one_line(tmp_path: Path) -> None:
    secret = tmp_path / "closed.osm.pbf"
    secret.write_bytes(SAMPLE.read_bytes())
    secret.chmod(0)
    line = error_line(appliance("routing", "build", "--pbf", str(secret), "--data-dir", str(tmp_path)), 2)
    assert "is not readable" in line


def test_a_data_directory_that_cannot_be_written_fails_in_one_line_naming_it() -> None:
    # /sys refuses a new directory to every user, root included (mode bits would not stop root).
    line = error_line(appliance("init", "--data-dir", "/sys/appliance-data"), 1)
    assert line.startswith("error: /sys/appliance-data: not writable")
    assert "--data-dir" in line


def test_a_data_directory_that_does_not_exist_is_refused_by_health_in_one_line(tmp_path: Path) -> None:
    line = error_line(appliance("health", "--data-dir", str(tmp_path / "typo")), 1)
    assert "does not exist" in line and "appliance init" in line
    assert not (tmp_path / "typo").exists()


def test_a_data_directory_never_initialised_is_refused_in_one_line(tmp_path: Path) -> None:
    line = error_line(appliance("health", "--data-dir", str(tmp_path)), 1)
    assert "is not initialised" in line and "appliance init" in line
    copy = appliance(
        "backup", "--out", str(tmp_path / "copy"), "--data-dir", str(tmp_path),
        APPLIANCE_BACKUP_PASSPHRASE="a passphrase",
    )  # fmt: skip
    line = error_line(copy, 1)
    assert "run appliance init first" in line


@pytest.mark.server
@pytest.mark.parametrize("command", ["serve", "demo"])
def test_a_port_already_in_use_is_named_in_one_line_before_anything_is_done(
    tmp_path: Path, command: str
) -> None:
    initialised = tmp_path / "never-created"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = appliance(
            command,
            "--data-dir",
            str(initialised),
            "--dispatch-port",
            str(port),
            "--engine-port",
            str(free_port()),
        )
    line = error_line(result, 1)
    assert f"port {port} on 127.0.0.1 (dispatch) is already in use" in line
    assert "--dispatch-port" in line
    assert not initialised.exists()  # nothing migrated, nothing built


def test_a_database_locked_for_longer_than_the_timeout_fails_in_one_line(initialised: Path) -> None:
    holder = sqlite3.connect(initialised / "engine.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = appliance(
            "operator",
            "create",
            "op_locked00001",
            "--data-dir",
            str(initialised),
            APPLIANCE_SQLITE_BUSY_TIMEOUT_MS="200",
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    line = error_line(result, 1)
    assert "the database is locked by another process" in line
    assert "sqlite_busy_timeout_ms" in line


def test_a_failed_road_build_ends_with_one_error_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.osm.pbf"
    broken.write_bytes(b"\x00\x00\x00\x0dnot an extract at all")
    line = build_error_line(appliance("routing", "build", "--pbf", str(broken), "--data-dir", str(tmp_path)))
    assert line.startswith("error: osrm-extract failed: ")
    assert not list((tmp_path / "routing").glob("build-*"))


def test_a_failed_tile_build_fails_in_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.osm.pbf"
    broken.write_bytes(b"not an extract")
    line = error_line(appliance("map", "build", "--pbf", str(broken), "--data-dir", str(tmp_path)), 1)
    assert line == f"error: {broken}: not an OpenStreetMap extract (.osm.pbf)"


def test_a_damaged_custody_key_stops_serve_in_one_line(initialised: Path) -> None:
    (initialised / "custody.key").write_text("\n")  # emptied, as a failed copy leaves it
    result = appliance(
        "serve",
        "--data-dir",
        str(initialised),
        "--dispatch-port",
        str(free_port()),
        "--engine-port",
        str(free_port()),
    )
    line = error_line(result, 1)
    assert line.startswith("error: custody key: the custody key is not a valid BIP39 mnemonic")
    assert "custody.key" in line


def test_a_wrong_custody_key_in_the_environment_stops_serve_in_one_line(
    initialised: Path,
) -> None:
    result = appliance(
        "serve",
        "--only",
        "engine",
        "--data-dir",
        str(initialised),
        "--engine-port",
        str(free_port()),
        APPLIANCE_CUSTODY_KEY="not twenty-four words",
    )
    assert "APPLIANCE_CUSTODY_KEY" in error_line(result, 1)


def test_a_malformed_settings_file_fails_in_one_line_naming_the_file(initialised: Path) -> None:
    (initialised / "appliance.toml").write_text("dispatch_port = \n")
    line = error_line(appliance("serve", "--data-dir", str(initialised)), 1)
    assert line.startswith(f"error: {initialised / 'appliance.toml'}: ")
    assert "line 1" in line


def test_debug_prints_the_traceback_before_the_same_error_line(initialised: Path) -> None:
    (initialised / "appliance.toml").write_text("dispatch_port = \n")
    quiet = appliance("init", "--data-dir", str(initialised))
    line = error_line(quiet, 1)
    for loud in (
        appliance("--debug", "init", "--data-dir", str(initialised)),
        appliance("init", "--data-dir", str(initialised), "--debug"),
        appliance("init", "--data-dir", str(initialised), APPLIANCE_DEBUG="1"),
    ):
        assert loud.returncode == 1
        assert loud.stderr.startswith("Traceback (most recent call last):"), loud.stderr
        assert loud.stderr.splitlines()[-1] == line


def test_a_usage_error_is_one_line_exiting_2() -> None:
    line = error_line(appliance("migrate", "--service", "nope"), 2)
    assert "'nope' is not one of" in line and "appliance migrate --help" in line
    assert error_line(appliance("no-such-command"), 2).startswith("error: No such command")
