"""Orders benchmark on SQLite: GPS points ingested per second (batches of 50, 8 couriers sending
at once), GET /orders?date= latency for a day of 2,000 orders, and POST /orders/import of 2,000
rows (CSV and .xlsx; dry run, import, the same file again) with the serving processes' peak
memory after each import (flat: it must not grow with every file). Starts the real dispatch app
with waitress on a free port.

    python bench/orders/run.py [--seconds 6]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests  # noqa: E402
from support import percentile, run_together, start_server, stop_server  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import connection, write_transaction  # noqa: E402
from appliance.dispatch.app import create_app  # noqa: E402
from appliance.dispatch.auth.sessions import start_session  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.dispatch.models import Company, Courier, Depot, Membership, Order, User  # noqa: E402
from appliance.settings import load_settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--couriers", type=int, default=8)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-orders-"))
    settings = load_settings(
        {"data_dir": str(data), "rate_limits": "off", "log_level": "WARNING"}, environ={}
    )
    migrate_all(settings)
    app = create_app(settings)  # binds the database and loads the keys the tokens are signed with
    rt = app.extensions["dispatch"]
    tokens: list[str] = []
    with connection(database), write_transaction(database):
        now = clock.now()
        company = Company.create(name="Bench", created_at=now)
        Depot.create(
            company=company, name="D", address="A", lat=40.18, lon=44.51, is_default=True, created_at=now
        )
        owner = User.create(email="owner@bench.am", display_name="Owner", created_at=now)
        dispatcher = start_session(
            Membership.create(user=owner, company=company, role="dispatcher", joined_at=now),
            rt.settings,
            rt.master_key,
        ).access_token
        for n in range(args.couriers):
            user = User.create(email=f"c{n}@bench.am", display_name=f"Courier {n}", created_at=now)
            membership = Membership.create(user=user, company=company, role="courier", joined_at=now)
            Courier.create(company=company, user=user, display_name=user.display_name, created_at=now)
            tokens.append(start_session(membership, rt.settings, rt.master_key).access_token)
        day = datetime(2026, 11, 20, 4, 0, tzinfo=UTC)  # 08:00 in Yerevan
        rows = [
            {
                "company": company.id,
                "public_id": f"B{i:09d}",
                "status": "ready" if i % 3 else "delivered",
                "recipient_name": "R",
                "recipient_phone": "+37400000000",
                "address_hy": "Address",
                "lat": 40.18,
                "lon": 44.51,
                "created_at": day + timedelta(seconds=i * 20),
                "updated_at": day,
                "finished_at": None if i % 3 else day + timedelta(hours=1),
            }
            for i in range(2000)
        ]
        for start in range(0, len(rows), 500):
            Order.insert_many(rows[start : start + 500]).execute()
    server, url = start_server(data, "dispatch", APPLIANCE_RATE_LIMITS="off")
    try:
        run(url, tokens, dispatcher, args.seconds)
        run_import(url, dispatcher, server.pid)
    finally:
        stop_server(server)
        shutil.rmtree(data, ignore_errors=True)


def run(url: str, tokens: list[str], dispatcher: str, seconds: float) -> None:

    points = 0
    lock = threading.Lock()

    def courier(token: str, n: int) -> None:
        nonlocal points
        session = requests.Session()
        headers = {"Authorization": f"Bearer {token}"}
        base = datetime(2026, 11, 22, 6, 0, tzinfo=UTC) + timedelta(days=n)
        deadline = time.monotonic() + seconds
        batch = 0
        while time.monotonic() < deadline:
            batch_points = [
                {
                    "lat": 40.18 + i * 1e-5,
                    "lon": 44.51,
                    "accuracyM": 5,
                    "capturedAt": (base + timedelta(seconds=batch * 50 + i))
                    .isoformat()
                    .replace("+00:00", "Z"),
                }
                for i in range(50)
            ]
            response = session.post(
                f"{url}/courier/location", json={"points": batch_points}, headers=headers, timeout=30
            )
            if response.status_code != 202:
                raise SystemExit(f"location: {response.status_code} {response.text[:200]}")
            batch += 1
            with lock:
                points += response.json()["accepted"]

    threads = [threading.Thread(target=courier, args=(token, n)) for n, token in enumerate(tokens)]
    wall = run_together(threads)
    print(
        f"GPS ingest: {points} points in {wall:.1f} s from {len(tokens)} couriers = {points / wall:.0f} points/s"
    )

    session = requests.Session()
    headers = {"Authorization": f"Bearer {dispatcher}"}
    latencies = []
    for _ in range(200):
        started = time.perf_counter()
        response = session.get(f"{url}/orders?date=2026-11-20&limit=2000", headers=headers, timeout=30)
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 200 and len(response.json()["orders"]) == 2000
    print(
        f"GET /orders?date= (2,000 orders): p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms"
    )
    rate, p99 = points / wall, percentile(latencies, 0.99) * 1000
    print(
        f"targets: >= 5,000 points/s {'met' if rate >= 5000 else 'MISSED'}; "
        f"p99 < 100 ms {'met' if p99 < 100 else 'MISSED'}"
    )


_NAMES = ["Գայանե Պետրոսյան", "Анна Смирнова", "Aram Hakobyan", "Նարեկ Սարգսյան", "Ольга Ким"]
_STREETS = ["Աբովյան", "улица Туманяна", "Mashtots Ave", "Սայաթ-Նովա", "проспект Баграмяна"]


def import_rows(first: int, count: int) -> list[list[object]]:
    """A day's orders as a shop would send them: mixed scripts, phones in every usual form."""
    header = [
        "externalRef",
        "recipientName",
        "recipientPhone",
        "amountAmd",
        "isCod",
        "address",
        "lat",
        "lon",
        "entrance",
        "floor",
        "apartment",
        "noteToCourier",
        "deliveryWindowStart",
        "deliveryWindowEnd",
    ]
    rows: list[list[object]] = [header]
    for n in range(first, first + count):
        phone = [f"091 {100000 + n % 900000}", f"+374 77 {200000 + n % 700000}", f"0{93000000 + n}"][n % 3]
        rows.append(
            [
                f"SHOP-{n}",
                _NAMES[n % 5],
                phone,
                1000 + n % 50 * 100,
                "yes" if n % 4 == 0 else "no",
                f"{_STREETS[n % 5]} {n % 120 + 1}",
                round(40.15 + (n % 500) / 10000, 5),
                round(44.48 + (n % 400) / 10000, 5),
                str(n % 4 + 1),
                str(n % 12),
                str(n % 80),
                "Call first" if n % 7 == 0 else "",
                "2026-11-26 10:00",
                "2026-11-26 14:00",
            ]
        )
    return rows


def _csv(rows: list[list[object]]) -> bytes:
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _xlsx(rows: list[list[object]]) -> bytes:
    import io

    from openpyxl import Workbook

    book = Workbook()
    for values in rows:
        book.active.append(values)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _peak_rss_mb(root: int) -> float:
    """The largest peak resident set (VmHWM) among the server process and its children."""
    pids, peak = [root], 0
    while pids:
        pid = pids.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            for task in Path(f"/proc/{pid}/task").iterdir():
                pids += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]))
    return peak / 1024


def run_import(url: str, dispatcher: str, server_pid: int) -> None:
    session = requests.Session()
    headers = {"Authorization": f"Bearer {dispatcher}"}

    def send(label: str, data: bytes, *, xlsx: bool = False, dry: bool = False) -> float:
        started = time.perf_counter()
        target = f"{url}/orders/import" + ("?dryRun=true" if dry else "")
        if xlsx:
            response = session.post(
                target, files={"file": ("orders.xlsx", data)}, headers=headers, timeout=120
            )
        else:
            response = session.post(
                target, data=data, headers={**headers, "Content-Type": "text/csv"}, timeout=120
            )
        wall = time.perf_counter() - started
        body = response.json()
        if response.status_code != 200 or body["refused"]:
            raise SystemExit(f"import: {response.status_code} {response.text[:300]}")
        print(
            f"POST /orders/import {label}: {wall:.2f} s, created {body['created']}, existing {body['existing']}; "
            f"server peak RSS {_peak_rss_mb(server_pid):.0f} MB"
        )
        return wall

    print(f"server peak RSS before the imports: {_peak_rss_mb(server_pid):.0f} MB")
    csv_file = _csv(import_rows(1, 2000))
    send(f"2,000 rows CSV ({len(csv_file) // 1024} KB), dry run", csv_file, dry=True)
    walls = [send("2,000 rows CSV", csv_file)]
    send("the same CSV again", csv_file)
    xlsx_file = _xlsx(import_rows(10001, 2000))
    walls.append(send(f"2,000 rows .xlsx ({len(xlsx_file) // 1024} KB)", xlsx_file, xlsx=True))
    walls.append(send("2,000 more rows CSV", _csv(import_rows(20001, 2000))))
    print(f"targets: 2,000 rows < 10 s {'met' if max(walls) < 10 else 'MISSED'} (slowest {max(walls):.2f} s)")


if __name__ == "__main__":
    main()
