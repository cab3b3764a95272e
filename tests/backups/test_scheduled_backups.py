"""Issue 48: a real `appliance serve` with a schedule of a few seconds takes encrypted backups into
a folder and an S3 bucket (moto's S3 server, the one the two-node test uses), drills each, prunes
beyond retention, and a backup damaged in the bucket fails `appliance backup verify`, its next
drill, and the dispatch service's ``backups`` readiness check."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from appliance.backup import Unlock
from appliance.backups.drill import drill
from appliance.backups.storage import Bucket
from appliance.common.sealing import MAGIC
from tests.conftest import BACKEND
from tests.nodes.harness import launch, running_s3, until, wait_ready, write_settings

PASSPHRASE = "the scheduled backups' passphrase"
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


def _backups_check(dispatch: str) -> dict:
    answer = requests.get(f"{dispatch}/healthz", timeout=10).json()
    return answer["checks"]["backups"]


@pytest.mark.server
def test_a_serve_on_a_schedule_backs_up_encrypted_drills_prunes_and_fails_health_on_a_damaged_backup(
    data_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    with running_s3(BUCKET) as endpoint:
        write_settings(
            data_dir,
            {
                "backup_every_hours": 5 / 3600,  # every five seconds
                "backup_to_dir": str(folder),
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
            },
        )
        node = launch("backups", data_dir, {"APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE})
        try:
            wait_ready([node])
            bucket = Bucket(endpoint, BUCKET, PREFIX, "test", "testsecret", "us-east-1")

            # Three runs, each drilled in both places, and the second and third drilling the
            # backup kept beside them again: ten drills, all passed.
            until("three backups drilled", lambda: len(_rows(data_dir, "SELECT id FROM backup_drill")) >= 10)
            runs = _rows(data_dir, "SELECT name, passed, bytes FROM backup_run ORDER BY id")
            assert len(runs) >= 3 and all(passed for _, passed, _ in runs), runs
            drills = _rows(data_dir, "SELECT backup, destination, passed, detail FROM backup_drill")
            assert all(passed for _, _, passed, _ in drills), drills
            assert {destination for _, destination, _, _ in drills} == {
                str(folder),
                f"s3://{BUCKET}/{PREFIX}",
            }
            assert "row counts" in drills[0][3]

            # Retention: the two newest stay, in the folder and in the bucket alike.
            newest = until("the bucket pruned to two", lambda: len(bucket.names()) == 2 and bucket.names())
            in_folder = [p.name for p in folder.iterdir() if not p.name.startswith(".")]
            assert runs[0][0] not in in_folder and runs[0][0] not in bucket.names()
            assert 2 <= len(in_folder) <= 3  # the next run may have written its own already
            assert _backups_check(node.dispatch)["status"] == "pass"

            # Encrypted in the bucket: no object but the manifest is readable, and the passphrase
            # opens each backup (a drill of the downloaded copy passes; a wrong one does not).
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
            )
            check = until(
                "the backups check failing",
                lambda: (c := _backups_check(node.dispatch))["status"] == "fail" and c,
            )
            assert name in check["detail"] and "dispatch.db" in check["detail"]
            metrics = requests.get(f"{node.dispatch}/metrics", timeout=10).text
            assert "appliance_backup_drills_failing 1.0" in metrics
            assert "appliance_backup_last_success_timestamp_seconds" in metrics
            # Kept as the evidence while newer backups come and go.
            until("a newer backup pruned", lambda: name in bucket.names() and len(bucket.names()) >= 3)
            assert _backups_check(node.dispatch)["status"] == "fail"
        finally:
            node.server.stop()
