"""pg_dump and pg_restore never get the database password on their command line (issue 33): any
local user reads a process's arguments in ``ps`` or /proc/PID/cmdline; the password goes through
PGPASSWORD in the child's environment, which only its own user can read. The real dump and restore
run in test_backup_postgres.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from appliance import backup

URL = "postgresql://dispatch_user:s3cr%40t-pw@db.internal:5433/dispatch?sslmode=require"


@pytest.fixture
def calls(monkeypatch) -> list[dict]:
    seen: list[dict] = []

    def run(argv, **kwargs):
        seen.append({"argv": list(argv), "env": kwargs.get("env")})
        if "--file" in argv:
            Path(argv[argv.index("--file") + 1]).write_bytes(b"PGDMP")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(backup.subprocess, "run", run)
    monkeypatch.setattr(backup.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(backup, "_pg_schema_version", lambda url: 4)
    monkeypatch.setenv("PGPASSWORD", "a-password-from-elsewhere")
    return seen


def _assert_password_only_in_environment(call: dict) -> None:
    assert not any("s3cr" in arg for arg in call["argv"]), call["argv"]
    assert call["env"]["PGPASSWORD"] == "s3cr@t-pw"
    dsn = call["argv"][call["argv"].index("--dbname") + 1]
    for part in ("host=db.internal", "port=5433", "dbname=dispatch", "user=dispatch_user", "sslmode=require"):
        assert part in dsn


def test_pg_dump_gets_the_password_through_its_environment_not_its_arguments(calls, tmp_path: Path) -> None:
    database = backup.Database("dispatch", "postgresql", URL, "dispatch.dump")
    backup._pg_dump(database, tmp_path / "dispatch.dump")
    (call,) = calls
    assert call["argv"][0] == "pg_dump"
    _assert_password_only_in_environment(call)


def test_pg_restore_gets_the_password_through_its_environment_not_its_arguments(
    calls, tmp_path: Path
) -> None:
    backup._pg_restore(tmp_path / "dispatch.dump", URL, "dispatch")
    (call,) = calls
    assert call["argv"][0] == "pg_restore"
    _assert_password_only_in_environment(call)


def test_a_url_without_a_password_leaves_the_operators_own_pgpassword(calls, tmp_path: Path) -> None:
    backup._pg_restore(tmp_path / "d.dump", "postgresql://me@127.0.0.1/dispatch", "dispatch")
    (call,) = calls
    assert call["env"]["PGPASSWORD"] == "a-password-from-elsewhere"
