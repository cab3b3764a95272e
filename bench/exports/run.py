"""Export benchmark: a synthetic job of N report rows (report rows are day-and-asset totals, so they
are seeded directly), snapshotted by the worker and downloaded over HTTP from `appliance serve`
(waitress) by a streaming client. Prints rows/s of the snapshot and of the download, and the
server's peak RSS, for 10,000 and 1,000,000 rows side by side.

    python bench/exports/run.py [--rows 10000,1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from support import free_port  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import bind_database  # noqa: E402
from appliance.common.keys import load_or_create_master_key  # noqa: E402
from appliance.engine.auth.operators import create_operator  # noqa: E402
from appliance.engine.client import EngineClient  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import ReportRow  # noqa: E402
from appliance.settings import load_settings  # noqa: E402


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def run(rows: int) -> dict[str, float]:
    data = Path(tempfile.mkdtemp(prefix="bench-exports-"))
    settings = load_settings({"data_dir": str(data)}, environ={})
    migrate_all(settings)
    bind_database(database, settings.engine_db_url)
    # Seed: one ETH row per day, as many days as rows, operators of realistic size elsewhere.
    moment = clock.now()
    start = date(1, 1, 1)
    with database.connection_context():
        op = create_operator(load_or_create_master_key(data), "op_bench00001")
        batch = []
        for n in range(rows):
            batch.append(
                {
                    "operator": "op_bench00001",
                    "report_type": "PAYOUTS",
                    "asset_code": "ETH",
                    "period": (start + timedelta(days=n)).isoformat(),
                    "count": n + 1,
                    "total_amount": str(10**24 + n),
                    "total_fee": "0",
                    "as_of": moment,
                }
            )
            if len(batch) == 10_000:
                with database.atomic():
                    ReportRow.insert_many(batch).execute()
                batch = []
        if batch:
            with database.atomic():
                ReportRow.insert_many(batch).execute()
    port, engine_port = free_port(), free_port()
    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/appliance"),
            "serve",
            "--data-dir",
            str(data),
            "--dispatch-port",
            str(port),
            "--engine-port",
            str(engine_port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "APPLIANCE_LOCAL_CHAIN": "0"},
    )
    try:
        client = EngineClient(f"http://127.0.0.1:{engine_port}", op["operatorId"], op["secret"], timeout=600)
        deadline = time.monotonic() + 60
        while True:
            try:
                client.session.get(f"{client.base_url}/health/live", timeout=1)
                break
            except Exception:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        started = time.monotonic()
        client._json(
            client.request(
                "POST",
                "/v1/exports",
                json_body={
                    "jobId": "bench-job-0001",
                    "reportType": "PAYOUTS",
                    "assetCode": "ETH",
                    "fromTime": "0001-01-01T00:00:00Z",
                    "toTime": "9999-01-01T00:00:00Z",
                },
            )
        )
        while client.get_export("bench-job-0001")["status"] != "COMPLETE":
            time.sleep(0.05)
        snapshot_s = time.monotonic() - started
        rss_before = peak_rss_kb(server.pid)
        started = time.monotonic()
        received, lines = 0, 0
        for chunk in client.download_export("bench-job-0001"):
            received += len(chunk)
            lines += chunk.count(b"\n")
        download_s = time.monotonic() - started
        assert lines == rows + 1, (lines, rows)
        return {
            "rows": rows,
            "snapshotRowsPerSecond": round(rows / snapshot_s),
            "downloadRowsPerSecond": round(rows / download_s),
            "megabytes": round(received / 1e6, 1),
            "serverPeakRssMbBeforeDownload": round(rss_before / 1024, 1),
            "serverPeakRssMbAfterDownload": round(peak_rss_kb(server.pid) / 1024, 1),
        }
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="10000,1000000")
    args = parser.parse_args()
    for rows in (int(r) for r in args.rows.split(",")):
        print(json.dumps(run(rows)), flush=True)


if __name__ == "__main__":
    main()
