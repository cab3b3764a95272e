"""Backup and restore of a data directory holding 1,000,000 GPS points.

    python bench/backup/run.py [--points N]

Builds a migrated data directory with one company, 50 couriers and N GPS points (inserted in bulk,
as a year of a small fleet's batches would leave them), then times, in this order:
- `appliance backup` (the command's own code, in process): snapshot, copy, checksums, manifest;
- `appliance restore` into an empty directory: copy with checksums, quick_check of each database;
- peers measured on the same files in the same run: a plain file copy of both databases (cp, not
  safe while serving), SQLite's `VACUUM INTO` and the SQLite backup API alone (no checksums).
Prints one line per figure. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from appliance.backup import Unlock, create_backup, restore_backup  # noqa: E402
from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common.sealing import Sealer  # noqa: E402

PASSPHRASE = "bench passphrase"
SEALER = Sealer.with_passphrase(PASSPHRASE)  # stretched once, outside the timings
from appliance.settings import load_settings  # noqa: E402

COURIERS = 50


def populate(data_dir: Path, points: int) -> None:
    settings = load_settings({"data_dir": str(data_dir)}, environ={})
    migrate_all(settings)
    now = datetime.now(UTC).replace(tzinfo=None)
    stamp = now.isoformat(sep=" ", timespec="microseconds")
    with sqlite3.connect(data_dir / "dispatch.db") as conn:
        conn.execute(
            "INSERT INTO company (name, city, plan, brand_color, show_courier_phone, created_at)"
            " VALUES ('Bench', 'Yerevan', 'trial', '#1a73e8', 0, ?)",
            (stamp,),
        )
        company = conn.execute("SELECT max(id) FROM company").fetchone()[0]
        couriers = []
        for n in range(COURIERS):
            conn.execute(
                "INSERT INTO user (email, display_name, email_confirmed, created_at) VALUES (?, ?, 1, ?)",
                (f"courier{n}@bench.am", f"Courier {n}", stamp),
            )
            user = conn.execute("SELECT max(id) FROM user").fetchone()[0]
            conn.execute(
                "INSERT INTO courier (company_id, user_id, display_name, preferred_language, onboarding_completed,"
                " active, online, created_at) VALUES (?, ?, ?, 'hy', 1, 1, 0, ?)",
                (company, user, f"Courier {n}", stamp),
            )
            couriers.append(conn.execute("SELECT max(id) FROM courier").fetchone()[0])
        start = now - timedelta(days=60)

        def rows():
            for i in range(points):
                courier = couriers[i % COURIERS]
                moment = start + timedelta(seconds=5 * (i // COURIERS))
                text = moment.isoformat(sep=" ", timespec="microseconds")
                yield (courier, 40.17 + (i % 997) * 1e-5, 44.50 + (i % 991) * 1e-5, text, 8, "gps", text)

        conn.executemany(
            "INSERT INTO courier_location (courier_id, lat, lon, captured_at, accuracy_m, source, received_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows(),
        )
    with sqlite3.connect(data_dir / "dispatch.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def timed(label: str, fn) -> float:
    started = time.perf_counter()
    fn()
    seconds = time.perf_counter() - started
    print(f"{label:<48} {seconds:8.2f} s", flush=True)
    return seconds


def vacuum_into(source: Path, target: Path) -> None:
    with sqlite3.connect(source) as conn:
        conn.execute("VACUUM INTO ?", (str(target),))


def backup_api(source: Path, target: Path) -> None:
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--points", type=int, default=1_000_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-backup-"))
    try:
        data = root / "data"
        timed(f"populate ({args.points:,} GPS points)", lambda: populate(data, args.points))
        size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
        print(f"{'data directory size':<48} {size / 2**20:8.1f} MiB")
        settings = load_settings({"data_dir": str(data)}, environ={})
        timed(
            "appliance backup (snapshot, seal, sha256)",
            lambda: create_backup(settings, root / "backup", sealer=SEALER),
        )
        timed(
            "appliance restore (sha256, quick_check)",
            lambda: restore_backup(
                root / "backup",
                root / "restored",
                lambda t: load_settings({"data_dir": str(t)}, environ={}),
                unlock=Unlock(passphrase=lambda: PASSPHRASE),
            ),
        )
        with sqlite3.connect(root / "restored" / "dispatch.db") as conn:
            count = conn.execute("SELECT count(*) FROM courier_location").fetchone()[0]
        assert count == args.points, count
        print(f"{'restored GPS points':<48} {count:8,d}")
        peers = root / "peers"
        peers.mkdir()
        timed(
            "peer: cp of both database files (not online)",
            lambda: [shutil.copyfile(data / n, peers / f"cp-{n}") for n in ("dispatch.db", "engine.db")],
        )
        timed(
            "peer: sqlite VACUUM INTO (both databases)",
            lambda: [vacuum_into(data / n, peers / f"vacuum-{n}") for n in ("dispatch.db", "engine.db")],
        )
        timed(
            "peer: sqlite backup API alone (both databases)",
            lambda: [backup_api(data / n, peers / f"api-{n}") for n in ("dispatch.db", "engine.db")],
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
        os.sync()


if __name__ == "__main__":
    main()
