"""Issue 48, in process: the scheduler's runs into a folder on a clock moved by hours (retention
by hours, one run per interval), a backup damaged in the folder failing its drill and the
``backups`` check and kept as the evidence until an administrator removes it, the warning of a
stale backup, `appliance backup verify` on a folder, and the settings that refuse a passphrase in
appliance.toml. The backup's scrypt work factor is lowered for speed (the same code, less work)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from appliance.backup import Unlock
from appliance.backups import history
from appliance.backups.drill import drill
from appliance.backups.retention import Retention, to_keep
from appliance.backups.schedule import BackupScheduler, backup_workers
from appliance.common import clock, sealing
from appliance.common.db import bind_database
from appliance.dispatch.db import database
from appliance.settings import Settings, SettingsError, load_settings
from tests.conftest import BACKEND

PASSPHRASE = "a passphrase for the folder"
T0 = datetime(2026, 11, 28, 10, 0, tzinfo=UTC)


@pytest.fixture
def scheduled(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BackupScheduler:
    monkeypatch.setattr(sealing, "SCRYPT_N", 2**10)
    settings = settings.replace(
        local_chain=False,  # no embedded chain to create: quicker runs
        backup_every_hours=1.0,
        backup_to_dir=str(tmp_path / "kept"),
        backup_passphrase=PASSPHRASE,
        backup_keep_last=1,
        backup_keep_hourly=2,
        backup_keep_daily=0,
        backup_keep_weekly=0,
    )
    bind_database(database, settings.dispatch_db_url)
    with database.connection_context():
        yield BackupScheduler(settings)
    database.close()


def _at(hours: float, scheduler: BackupScheduler) -> int:
    clock.freeze(T0 + timedelta(hours=hours))
    before = history.BackupRun.select().count()
    scheduler.run_pass()
    return history.BackupRun.select().count() - before


def _kept(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def _check(interval: timedelta = timedelta(hours=1)):
    return history.backups_probe(interval)()


def test_runs_keep_by_the_hour_and_a_damaged_backup_fails_health_until_an_administrator_removes_it(
    scheduled: BackupScheduler, tmp_path: Path
) -> None:
    folder = tmp_path / "kept"
    assert _at(0, scheduled) == 1
    assert _at(0.5, scheduled) == 0  # not due: one run per interval
    assert _at(1, scheduled) == 1
    assert _at(2, scheduled) == 1
    # The newest, and the newest of each of the last two hours: 10:00 is gone.
    assert _kept(folder) == ["appliance-20261128T110000Z", "appliance-20261128T120000Z"]
    drills = list(history.BackupDrill.select())
    assert len(drills) == 5 and all(d.passed for d in drills)
    assert _check().status == "pass"

    # A byte of the newest backup's engine database changes where it is kept.
    damaged = folder / "appliance-20261128T120000Z"
    target = damaged / ("engine.db" if (damaged / "engine.db").exists() else "engine.pgdump")
    body = bytearray(target.read_bytes())
    body[len(body) // 2] ^= 0x40
    target.write_bytes(bytes(body))

    assert _at(3, scheduled) == 1  # 13:00 drills well; 12:00, drilled again, fails
    latest = history.BackupDrill.select().order_by(history.BackupDrill.id.desc()).first()
    assert latest.backup == damaged.name and not latest.passed and target.name in latest.detail
    check = _check()
    assert check.status == "fail" and damaged.name in check.detail

    assert _at(4, scheduled) == 1  # retention alone would prune 12:00 now: it is the evidence
    assert damaged.name in _kept(folder) and "appliance-20261128T130000Z" in _kept(folder)
    assert _check().status == "fail"

    shutil.rmtree(damaged)  # the administrator looked, and removed it
    assert _at(5, scheduled) == 1
    assert _kept(folder) == ["appliance-20261128T140000Z", "appliance-20261128T150000Z"]
    assert _check().status == "pass"

    clock.freeze(T0 + timedelta(hours=7, seconds=1))  # the last good backup ended just after 15:00
    stale = _check()
    assert stale.status == "pass" and "older than twice the interval" in stale.data["warning"]


def test_a_run_without_a_passphrase_fails_is_recorded_and_warns(
    scheduled: BackupScheduler, tmp_path: Path
) -> None:
    scheduled.settings = scheduled.settings.replace(backup_passphrase="")
    assert _at(0, scheduled) == 1
    run = history.BackupRun.get()
    assert not run.passed and "APPLIANCE_BACKUP_PASSPHRASE" in run.error
    assert not (tmp_path / "kept").exists() or _kept(tmp_path / "kept") == []
    check = _check()
    assert check.status == "pass" and "no backup has been taken yet" in check.data["warning"]
    assert "APPLIANCE_BACKUP_PASSPHRASE" in check.data["warning"]
    assert _at(0.05, scheduled) == 0  # tried again after a tenth of the interval, not at once
    assert _at(0.11, scheduled) == 1


@pytest.mark.skipif(BACKEND != "sqlite", reason="row counts are recorded for SQLite files")
def test_a_drill_fails_a_backup_whose_database_lost_rows_that_the_manifest_counted(
    scheduled: BackupScheduler, tmp_path: Path
) -> None:
    """A backup whose files and manifest agree (an unencrypted one rewritten consistently) but
    whose database holds fewer rows than were counted when it was taken."""
    from appliance.backup import MANIFEST, create_backup, sha256_of

    out = tmp_path / "plain"
    create_backup(scheduled.settings, out, sealer=None)
    with sqlite3.connect(out / "dispatch.db") as conn:
        conn.execute("DELETE FROM schema_migrations WHERE version = 1")
    manifest = json.loads((out / MANIFEST).read_text())
    for entry in manifest["files"]:
        if entry["path"] == "dispatch.db":
            entry["sha256"] = sha256_of(out / "dispatch.db")
            entry["size"] = (out / "dispatch.db").stat().st_size
    (out / MANIFEST).write_text(json.dumps(manifest))
    result = drill(out, tmp_path / "scratch", Unlock())
    assert not result.passed
    assert "row counts differ" in result.detail and "schema_migrations" in result.detail


def test_backup_verify_passes_a_good_folder_and_exits_1_on_a_damaged_one(
    scheduled: BackupScheduler, tmp_path: Path
) -> None:
    assert _at(0, scheduled) == 1
    (backup,) = (tmp_path / "kept").iterdir()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")},
        "APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE,
    }

    def verify() -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "appliance",
                "backup",
                "verify",
                str(backup),
                "--json",
                "--data-dir",
                str(scheduled.settings.data_dir),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            stdin=subprocess.DEVNULL,
        )

    good = verify()
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["passed"] is True
    manifest = json.loads((backup / "manifest.json").read_text())
    manifest["createdAt"] = "2020-01-01T00:00:00Z"  # the manifest's MAC no longer matches
    (backup / "manifest.json").write_text(json.dumps(manifest))
    bad = verify()
    assert bad.returncode == 1
    answer = json.loads(bad.stdout)
    assert answer["passed"] is False and answer["checks"][0]["check"] == "manifest"
    assert "damaged" in answer["detail"]
    assert not list(scheduled.settings.data_dir.glob(".backup-drill-*"))  # the scratch is gone


def test_retention_keeps_the_newest_and_the_newest_of_each_period_with_a_backup() -> None:
    moments = [T0 + timedelta(hours=h) for h in (0, 0.5, 1, 25, 26, 24 * 8)]
    backups = [(f"b{i}", m) for i, m in enumerate(moments)]
    assert to_keep(backups, Retention(last=1, hourly=0, daily=0, weekly=0)) == {"b5"}
    assert to_keep(backups, Retention(last=1, hourly=3, daily=0, weekly=0)) == {"b5", "b4", "b3"}
    assert to_keep(backups, Retention(last=1, hourly=0, daily=3, weekly=0)) == {"b5", "b4", "b2"}
    # Saturday 28 and Sunday 29 November are one ISO week; 6 December the next.
    assert to_keep(backups, Retention(last=1, hourly=0, daily=0, weekly=5)) == {"b5", "b4"}
    assert to_keep(backups, Retention(last=1, hourly=0, daily=0, weekly=0), protected="b0") == {"b5", "b0"}


def test_the_backup_passphrase_is_refused_in_the_settings_file_and_a_schedule_needs_a_destination(
    tmp_path: Path,
) -> None:
    (tmp_path / "appliance.toml").write_text('backup_passphrase = "in the clear"\n')
    with pytest.raises(SettingsError, match="backup_passphrase is not kept in the settings file"):
        load_settings({"data_dir": str(tmp_path)}, environ={})
    (tmp_path / "appliance.toml").write_text("backup_every_hours = 6\n")
    with pytest.raises(SettingsError, match="backup_to_dir or backup_s3_bucket"):
        load_settings({"data_dir": str(tmp_path)}, environ={})
    (tmp_path / "appliance.toml").write_text('backup_every_hours = 6\nbackup_s3_bucket = "b"\n')
    with pytest.raises(SettingsError, match="backup_s3_endpoint"):
        load_settings({"data_dir": str(tmp_path)}, environ={})
    (tmp_path / "appliance.toml").write_text('backup_every_hours = 0.0001\nbackup_to_dir = "k"\n')
    with pytest.raises(SettingsError, match="backup_every_hours"):
        load_settings({"data_dir": str(tmp_path)}, environ={})
    (tmp_path / "appliance.toml").write_text('backup_every_hours = 6\nbackup_to_dir = "k"\n')
    secret = "zq-passphrase-917"
    loaded = load_settings({"data_dir": str(tmp_path)}, environ={"APPLIANCE_BACKUP_PASSPHRASE": secret})
    assert loaded.backup_passphrase == secret and secret not in repr(loaded)
    assert Path(loaded.backup_to_dir).is_absolute()
    assert [name for name, _ in backup_workers(loaded)] == ["backups"]
    assert backup_workers(loaded.replace(backup_every_hours=0.0)) == []
