"""appliance backup and restore: a whole, checked copy of a data directory, taken while it serves."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from appliance.backup import BackupError, Unlock, create_backup, read_manifest, restore_backup
from appliance.common.sealing import Sealer
from appliance.settings import load_settings

PASSPHRASE = "backup passphrase of the tests"
UNLOCK = Unlock(passphrase=lambda: PASSPHRASE)

pytestmark = pytest.mark.skipif(
    __import__("tests.conftest", fromlist=["BACKEND"]).BACKEND != "sqlite",
    reason="the SQLite files of a data directory; PostgreSQL is dumped with pg_dump (test_backup_postgres)",
)


def _within(seconds: float, condition) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.05)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE},
    )


@pytest.fixture(scope="module")
def sealer() -> Sealer:
    return Sealer.with_passphrase(PASSPHRASE)


def _settings_for(target: Path):
    return load_settings({"data_dir": str(target)}, environ={})


@pytest.fixture
def populated(settings, dispatch_app, engine_app):
    """A data directory with rows in both databases, an object, an outgoing mail and both keys."""
    from appliance.engine.custody_file import create_custody_key

    create_custody_key(settings.data_dir, "backup passphrase")  # encrypted: a plain one is left out
    (settings.data_dir / "objects" / "1" / "logo").mkdir(parents=True)
    (settings.data_dir / "objects" / "1" / "logo" / "a.png").write_bytes(b"\x89PNG logo bytes")
    (settings.data_dir / "objects" / "1" / "logo" / ".upload-abc").write_bytes(b"half an upload")
    (settings.data_dir / "outbox").mkdir()
    (settings.data_dir / "outbox" / "0001.eml").write_text("Subject: hello\n\nbody\n")
    from tests.dispatch.factory import make_company

    make_company("Arev")
    return settings


def test_a_backup_restores_into_an_empty_directory_byte_for_byte(populated, sealer, tmp_path: Path) -> None:
    manifest = create_backup(populated, tmp_path / "backup", sealer=sealer)
    paths = {entry["path"] for entry in manifest["files"]}
    assert {"dispatch.db", "engine.db", "appliance.key", "custody.key", "objects/1/logo/a.png"} <= paths
    assert "chain/eth_local.db" in paths
    assert "outbox/0001.eml" not in paths  # sent mail stays out (its links are live)
    assert "objects/1/logo/.upload-abc" not in paths
    assert manifest["databases"]["dispatch"]["schemaVersion"] >= 9
    assert read_manifest(tmp_path / "backup") == {k: v for k, v in manifest.items() if k != "seconds"}

    result = restore_backup(tmp_path / "backup", tmp_path / "restored", _settings_for, unlock=UNLOCK)
    restored = tmp_path / "restored"
    assert result["dispatch"]["schemaVersion"] == manifest["databases"]["dispatch"]["schemaVersion"]
    for name in ("appliance.key", "custody.key", "objects/1/logo/a.png"):
        assert (restored / name).read_bytes() == (populated.data_dir / name).read_bytes()
    with sqlite3.connect(restored / "dispatch.db") as conn:
        assert conn.execute("SELECT name FROM company WHERE name = 'Arev'").fetchall() == [("Arev",)]
    assert (restored / "custody.key").stat().st_mode & 0o777 == 0o600


def test_a_backup_of_the_format_before_encryption_still_restores(populated, tmp_path: Path) -> None:
    create_backup(populated, tmp_path / "backup", sealer=None)
    manifest_path = tmp_path / "backup" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["encryption"], manifest["outbox"]
    manifest_path.write_text(json.dumps({**manifest, "format": 1}))
    result = restore_backup(tmp_path / "backup", tmp_path / "restored", _settings_for)
    assert result["encryption"] is None
    key = "appliance.key"
    assert (tmp_path / "restored" / key).read_bytes() == (populated.data_dir / key).read_bytes()


def test_clear_snapshots_a_killed_backup_left_in_the_data_directory_are_removed(
    populated, sealer, tmp_path: Path
) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs
    left = populated.data_dir / f".backup-{dead.pid}"
    left.mkdir()
    (left / "dispatch.db").write_bytes(b"a clear snapshot")
    running = populated.data_dir / f".backup-{os.getppid()}"
    running.mkdir()
    create_backup(populated, tmp_path / "backup", sealer=sealer)
    assert not left.exists() and running.is_dir()
    assert not list(populated.data_dir.glob(f".backup-{os.getpid()}"))


def test_it_refuses_to_write_over_an_existing_backup(populated, sealer, tmp_path: Path) -> None:
    (tmp_path / "backup").mkdir()
    (tmp_path / "backup" / "something").write_text("x")
    with pytest.raises(BackupError, match="not empty"):
        create_backup(populated, tmp_path / "backup", sealer=sealer)


def test_it_refuses_a_non_empty_target(populated, sealer, tmp_path: Path) -> None:
    create_backup(populated, tmp_path / "backup", sealer=sealer)
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "dispatch.db").write_text("someone's data")
    with pytest.raises(BackupError, match="not empty"):
        restore_backup(tmp_path / "backup", tmp_path / "target", _settings_for, unlock=UNLOCK)
    assert (tmp_path / "target" / "dispatch.db").read_text() == "someone's data"


def test_it_refuses_a_damaged_backup_and_leaves_the_target_empty(populated, sealer, tmp_path: Path) -> None:
    create_backup(populated, tmp_path / "backup", sealer=sealer)
    with open(tmp_path / "backup" / "objects" / "1" / "logo" / "a.png", "r+b") as handle:
        handle.write(b"X")
    with pytest.raises(BackupError, match=r"objects/1/logo/a\.png does not match its checksum"):
        restore_backup(tmp_path / "backup", tmp_path / "target", _settings_for, unlock=UNLOCK)
    assert list((tmp_path / "target").iterdir()) == []


def test_it_refuses_a_schema_newer_than_this_binary_knows(populated, sealer, tmp_path: Path) -> None:
    create_backup(populated, tmp_path / "backup", sealer=sealer)
    manifest_path = tmp_path / "backup" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["databases"]["engine"]["schemaVersion"] = 9999
    manifest_path.write_text(json.dumps(manifest))
    done = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "target"))
    assert done.returncode == 1
    assert "engine schema is version 9999, newer than this appliance knows" in done.stderr
    assert not (tmp_path / "target").exists() or list((tmp_path / "target").iterdir()) == []


def test_it_refuses_a_manifest_whose_paths_leave_the_backup(populated, sealer, tmp_path: Path) -> None:
    create_backup(populated, tmp_path / "backup", sealer=sealer)
    manifest_path = tmp_path / "backup" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"].append({"path": "../../etc/cron.d/x", "size": 1, "sha256": "0" * 64})
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(BackupError, match="leaves the backup"):
        restore_backup(tmp_path / "backup", tmp_path / "target", _settings_for, unlock=UNLOCK)


def test_the_commands_print_json_and_a_missing_manifest_is_a_clear_error(populated, tmp_path: Path) -> None:
    done = _cli("backup", "--data-dir", str(populated.data_dir), "--out", str(tmp_path / "b"), "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["path"] == str((tmp_path / "b").resolve())
    assert set(answer["databases"]) == {"dispatch", "engine", "chain"}
    done = _cli("restore", str(tmp_path / "b"), "--data-dir", str(tmp_path / "r"), "--json")
    assert done.returncode == 0, done.stderr
    assert (
        json.loads(done.stdout)["engine"]["schemaVersion"] == answer["databases"]["engine"]["schemaVersion"]
    )
    (tmp_path / "empty").mkdir()
    done = _cli("restore", str(tmp_path / "empty"), "--data-dir", str(tmp_path / "r2"))
    assert done.returncode == 1 and "manifest.json is missing" in done.stderr


# -- under write load ------------------------------------------------------------------------------


@pytest.mark.server
def test_a_backup_taken_under_write_load_restores_exactly_what_was_acknowledged_before_it(
    settings, tmp_path: Path
) -> None:
    """A real server takes GPS batches and payouts without pause while `appliance backup` runs. The
    restored appliance starts and holds every write acknowledged before the backup began, nothing
    sent after it ended, and each batch whole (never half of one)."""
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine
    from appliance.engine.client import EngineClient
    from tests.crash.harness import start_server
    from tests.dispatch.factory import make_company, make_member
    from tests.engine.helpers import make_operator

    courier = make_member(create_dispatch(settings), make_company(), "courier")
    operator = make_operator(create_engine(settings))
    server = start_server(settings.data_dir, "--processes", "1")
    base = (datetime.now(UTC) - timedelta(hours=3)).replace(microsecond=0)
    batches: list[tuple[int, float, float]] = []  # (n, sent, acknowledged) monotonic times
    payouts: list[tuple[str, float, float]] = []
    stop = threading.Event()

    def send_batches() -> None:
        session = requests.Session()
        n = 0
        while not stop.is_set():
            points = [
                {"lat": 40.18, "lon": 44.51, "capturedAt": (base + timedelta(seconds=n * 10 + i)).isoformat()}
                for i in range(10)
            ]
            sent = time.monotonic()
            answer = session.post(
                f"{server.dispatch}/courier/location",
                json={"points": points},
                headers=courier.headers,
                timeout=30,
            )
            assert answer.status_code == 202, answer.text
            batches.append((n, sent, time.monotonic()))
            n += 1

    def send_payouts() -> None:
        client = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
        n = 0
        while not stop.is_set():
            sent = time.monotonic()
            answer = client.submit_payout(f"pyo_bk{n:06d}", "USDC", str(1000 + n), "0x" + "ab" * 20)
            assert answer["outcome"] == "ACCEPTED"
            payouts.append((f"pyo_bk{n:06d}", sent, time.monotonic()))
            n += 1

    writers = [threading.Thread(target=send_batches), threading.Thread(target=send_payouts)]
    try:
        for writer in writers:
            writer.start()
        # Load under way (counted, not timed: a busy machine answers slower).
        _within(30, lambda: len(batches) > 10 and len(payouts) > 5)
        began = time.monotonic()
        done = _cli(
            "backup", "--data-dir", str(settings.data_dir), "--out", str(tmp_path / "backup"), "--json"
        )
        ended = time.monotonic()
        assert done.returncode == 0, done.stderr
        _within(30, lambda: any(sent > ended for _, sent, _ in list(batches)))
    finally:
        stop.set()
        for writer in writers:
            writer.join(timeout=60)
        server.stop()
    assert len(batches) > 10 and len(payouts) > 5
    assert any(sent > ended for _, sent, _ in batches)  # the load went on after the backup

    restored = tmp_path / "restored"
    done = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(restored), "--json")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(restored / "dispatch.db") as conn:
        stamps = [row[0] for row in conn.execute("SELECT captured_at FROM courier_location")]
    seconds = sorted(
        round((datetime.fromisoformat(s).replace(tzinfo=UTC) - base).total_seconds()) for s in stamps
    )
    assert len(seconds) == len(set(seconds))
    kept = {s // 10 for s in seconds}
    assert len(seconds) == 10 * len(kept)  # whole batches only
    before = {n for n, _, acknowledged in batches if acknowledged < began}
    after = {n for n, sent, _ in batches if sent > ended}
    assert before <= kept and not (kept & after)
    assert kept == set(range(len(kept)))  # a prefix of what was sent: nothing invented, nothing skipped

    restored_server = start_server(restored, "--processes", "1")
    try:
        current = requests.get(
            f"{restored_server.dispatch}/courier/location/current", headers=courier.headers
        )
        assert current.status_code == 200
        newest = base + timedelta(seconds=max(seconds))
        assert datetime.fromisoformat(current.json()["location"]["capturedAt"]) == newest
        client = EngineClient(
            restored_server.engine, operator["operatorId"], operator["secret"], max_attempts=1
        )
        for payout_id, _, acknowledged in payouts:
            if acknowledged < began:
                assert client.get_payout(payout_id)["payoutId"] == payout_id
        late = [payout_id for payout_id, sent, _ in payouts if sent > ended]
        with sqlite3.connect(restored / "engine.db") as conn:
            stored = {row[0] for row in conn.execute("SELECT payout_id FROM payout")}
        assert not stored & set(late)
    finally:
        restored_server.stop()
