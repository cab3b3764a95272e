"""A throwaway PostgreSQL server of the test's own (as .ci/postgres.sh starts one), so that a test
can stop and start it without disturbing the server the rest of the suite shares. Skips where
Debian's PostgreSQL binaries are missing."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import free_port


class OwnPostgres:
    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not found:
            pytest.skip("PostgreSQL's binaries (/usr/lib/postgresql/*/bin) are not installed")
        self.bin = Path(found[-1])
        self.root = Path(tempfile.mkdtemp(prefix="appliance-pgfault."))
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
        self._as_pg(str(self.bin / "initdb"), "-D", str(self.root / "data"), "-A", "trust", "-U", "appliance")

    def _as_pg(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True)

    def start(self) -> None:
        self._as_pg(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.root / "data"),
            "-l",
            str(self.root / "log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start",
        )

    def stop(self) -> None:
        self._as_pg(str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def url(self, database: str) -> str:
        return f"postgresql://appliance@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg2

        connection = psycopg2.connect(self.url("postgres"))
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute(f"CREATE DATABASE {name}")
        finally:
            connection.close()
        return self.url(name)

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
