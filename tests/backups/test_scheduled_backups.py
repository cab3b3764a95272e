"""Issue 48: a real `appliance serve` with a schedule of a few seconds takes encrypted backups into
an S3 bucket (moto's S3 server, the one the two-node test uses), drills each, prunes beyond
retention, and a backup damaged in the bucket fails `appliance backup verify`, its next drill, and
the dispatch service's ``backups`` readiness check. (The folder destination, retention by hours,
and a damaged backup's removal: test_backup_schedule.py, in process.)"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import requests

from appliance.backup import Unlock
from appliance.backups.drill import drill
from appliance.backups.storage import Bucket
from appliance.common.sealing import MAGIC
from tests.conftest import BACKEND, free_port, serve_command
from tests.crash.harness import Server
from tests.nodes.harness import running_s3, until, write_settings

PASSPHRASE = "the scheduled backups' passphrase"
# A run takes 2-6 s on an idle machine; CI runs four stages side by side (waits, not timings).
LOADED = 300
BUCKET = "backups"
PREFIX = "nightly/"

pytestmark = pytest.mark.skipif(BACKEND != "sqlite", reason="the schedule, not the backend: one run")


def _rows(data_dir: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{data_dir / 'dispatch.db'}?mode=ro", uri=True, timeout=10) as conn:
        return conn.execute(sql).fetchall()


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**env, "APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE},
    )


@contextlib.contextmanager
def the_backup_turn(data_dir: Path) -> Iterator[None]:
    """The scheduler's turn (the ``backup`` job lease), taken by this process as another node
    would take it: taken between two runs, and no run starts while it is held; given back due."""
    from appliance.common.db import bind_database
    from appliance.common.lease import SingletonLease
    from appliance.dispatch.db import database
    from appliance.dispatch.models import JobLease

    bind_database(database, f"sqlite:///{data_dir / 'dispatch.db'}")
    turn = SingletonLease.of(JobLease, "backup", duration=timedelta(hours=1))
    with database.connection_context():
        until("the backup turn", turn.take, pause=0.1)
    try:
        yield
    finally:
        with database.connection_context():
            turn.release(last_run_at=None)


def _serve_dispatch(data_dir: Path) -> Server:
    """A real `appliance serve --only dispatch` (the scheduled backups are a worker of the
    dispatch service; the engine's imports would only slow the start), once it answers."""
    dispatch_port, engine_port = free_port(), free_port()
    log = data_dir.parent / "serve.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            serve_command(data_dir, dispatch_port, engine_port, "--processes", "1", "--only", "dispatch"),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE},
        )
    server = Server(process, dispatch_port, engine_port, log)

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"serve exited: {log.read_text()[-3000:]}")
        try:
            return requests.get(f"{server.dispatch}/openapi.json", timeout=2).status_code == 200
        except (requests.ConnectionError, requests.Timeout):
            return False

    until("serve answering", answers, seconds=120)
    return server


def _backups_check(dispatch: str) -> dict:
    answer = requests.get(f"{dispatch}/healthz", timeout=10).json()
    return answer["checks"]["backups"]


@pytest.mark.server
def test_a_serve_on_a_schedule_backs_up_encrypted_drills_prunes_and_fails_health_on_a_damaged_backup(
    data_dir: Path, tmp_path: Path
) -> None:
    with running_s3(BUCKET) as endpoint:
        write_settings(
            data_dir,
            {
                "backup_every_hours": 5 / 3600,  # every five seconds (a run takes two to six)
                "backup_s3_bucket": BUCKET,
                "backup_s3_prefix": PREFIX,
                "backup_s3_endpoint": endpoint,
                "backup_s3_access_key": "test",
                "backup_s3_secret_key": "testsecret",
                "backup_keep_last": 2,
                "backup_keep_hourly": 0,
                "backup_keep_daily": 0,
                "backup_keep_weekly": 0,
                "routing_engine": "none",
                "local_chain": False,
            },
        )
        node = _serve_dispatch(data_dir)
        try:
            bucket = Bucket(endpoint, BUCKET, PREFIX, "test", "testsecret", "us-east-1")

            # Three runs, each drilled, and the second and third drilling the backup kept beside
            # them again: five drills, all passed.
            until(
                "three backups drilled",
                lambda: len(_rows(data_dir, "SELECT id FROM backup_drill")) >= 5,
                seconds=LOADED,
            )
            runs = _rows(data_dir, "SELECT name, passed, bytes FROM backup_run ORDER BY id")
            assert len(runs) >= 3 and all(passed for _, passed, _ in runs), runs
            drills = _rows(data_dir, "SELECT backup, destination, passed, detail FROM backup_drill")
            assert all(passed for _, _, passed, _ in drills), drills
            assert {destination for _, destination, _, _ in drills} == {f"s3://{BUCKET}/{PREFIX}"}
            assert "row counts" in drills[0][3]

            with the_backup_turn(data_dir):  # no run starts while the bucket is looked at
                # Retention: the two newest stay.
                newest = bucket.names()
                assert len(newest) == 2 and runs[0][0] not in newest
                assert _backups_check(node.dispatch)["status"] == "pass"

                # Encrypted in the bucket: no object but the manifest is readable, and the
                # passphrase opens each backup (a drill of the downloaded copy passes; a wrong
                # passphrase does not).
                name = newest[-1]
                objects = list(bucket.client.list_objects(BUCKET, prefix=f"{PREFIX}{name}/", recursive=True))
                assert len(objects) >= 4
                for item in objects:
                    body = bucket.client.get_object(BUCKET, item.object_name).read()
                    if item.object_name.endswith("manifest.json"):
                        assert json.loads(body)["encryption"]["scheme"] == "passphrase"
                        continue
                    assert body.startswith(MAGIC) and b"SQLite format 3" not in body, item.object_name
                fetched = bucket.fetch(name, tmp_path / "fetched")
                assert drill(fetched, tmp_path / "scratch-ok", Unlock(passphrase=lambda: PASSPHRASE)).passed
                wrong = drill(fetched, tmp_path / "scratch-wrong", Unlock(passphrase=lambda: "not it"))
                assert not wrong.passed and "cannot be opened" in wrong.detail

                # One byte flipped in the middle of the dispatch database's object.
                key = f"{PREFIX}{name}/dispatch.db"
                body = bytearray(bucket.client.get_object(BUCKET, key).read())
                body[len(body) // 2] ^= 0x01
                bucket.client.put_object(BUCKET, key, io.BytesIO(bytes(body)), len(body))

                done = _cli(data_dir, "backup", "verify", f"s3://{BUCKET}/{PREFIX}{name}", "--json")
                assert done.returncode == 1, done.stderr
                verdict = json.loads(done.stdout)
                assert verdict["passed"] is False
                assert "dispatch.db does not match its checksum" in verdict["detail"]

            # The next run drills it again (the kept backup drilled least recently): it fails, and
            # the backups check fails with it, and stays failing (the damaged backup is kept).
            until(
                "the damaged backup's drill failing",
                lambda: _rows(
                    data_dir,
                    f"SELECT detail FROM backup_drill WHERE backup = '{name}' AND NOT passed "
                    f"AND destination = 's3://{BUCKET}/{PREFIX}'",
                ),
                seconds=LOADED,
            )
            check = until(
                "the backups check failing",
                lambda: (c := _backups_check(node.dispatch))["status"] == "fail" and c,
                seconds=LOADED,
            )
            assert name in check["detail"] and "dispatch.db" in check["detail"]
            metrics = requests.get(f"{node.dispatch}/metrics", timeout=10).text
            assert "appliance_backup_drills_failing 1.0" in metrics
            assert "appliance_backup_last_success_timestamp_seconds" in metrics
            # Kept as the evidence while newer backups come and go: after the next run (which
            # retention alone would have pruned it in), it is still there.
            failed_at = _rows(data_dir, "SELECT max(id) FROM backup_run")[0][0]
            until(
                "one more run",
                lambda: _rows(data_dir, "SELECT max(id) FROM backup_run")[0][0] > failed_at,
                seconds=LOADED,
            )
            with the_backup_turn(data_dir):  # that run has ended
                kept = bucket.names()
                assert name in kept and len(kept) == 3 and kept.index(name) == 0
                assert _backups_check(node.dispatch)["status"] == "fail"
        finally:
            node.stop()
