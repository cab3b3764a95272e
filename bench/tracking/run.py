"""Tracking benchmark: GET /track/{token} requests per second with 8 clients, and the delay from
an order change to its event on 50 open event streams. The server runs in its own process
(`appliance serve --only dispatch`) on SQLite.

The event delay: 50 streams stay open while the dispatcher edits an order `--changes` times
(0.35 s apart, so that a change falls anywhere in a polling interval); each change's delay on
each stream is the time from just before the PATCH is sent to the stream's line arriving, so
p50 and p99 are over changes x streams. With `--processes N` the server runs N serving
processes: streams and the writer land on any of them (on SQLite an event written by another
process arrives through that process's data_version watcher; on PostgreSQL through
LISTEN/NOTIFY).

    python bench/tracking/run.py [--seconds 6] [--streams 50] [--changes 10] [--processes 1]
                                 [--database postgresql://…] [--skip-track]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import requests
from support import percentile, run_together, start_server, stop_server  # noqa: E402

from appliance.cli.admin import migrate_all
from appliance.common import clock
from appliance.common.db import connection, write_transaction
from appliance.dispatch.app import create_app
from appliance.dispatch.auth.sessions import start_session
from appliance.dispatch.db import database
from appliance.dispatch.models import Company, Courier, Depot, Membership, User
from appliance.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--skip-track", action="store_true", help="only the event delay")
    parser.add_argument(
        "--database",
        default="",
        help="the dispatch database URL (an empty PostgreSQL database); SQLite when omitted",
    )
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-tracking-"))
    settings = load_settings(
        {"data_dir": str(data), "rate_limits": "off", "dispatch_database": args.database}, environ={}
    )
    migrate_all(settings)
    app = create_app(settings)
    rt = app.extensions["dispatch"]
    with connection(database), write_transaction(database):
        now = clock.now()
        company = Company.create(name="Bench", created_at=now)
        Depot.create(
            company=company, name="D", address="A", lat=40.18, lon=44.51, is_default=True, created_at=now
        )
        tokens = {}
        for role in ("dispatcher", "courier"):
            user = User.create(email=f"{role}@bench.am", display_name=f"{role} bench", created_at=now)
            membership = Membership.create(user=user, company=company, role=role, joined_at=now)
            if role == "courier":
                courier = Courier.create(company=company, user=user, display_name="Narek", created_at=now)
            tokens[role] = start_session(membership, rt.settings, rt.master_key).access_token
    dispatcher = {"Authorization": f"Bearer {tokens['dispatcher']}"}
    courier_headers = {"Authorization": f"Bearer {tokens['courier']}"}
    client = app.test_client()
    order = client.post(
        "/orders",
        headers=dispatcher,
        json={
            "recipientName": "R",
            "recipientPhone": "+37400000000",
            "addressLabelHy": "A",
            "pin": {"lat": 40.19, "lon": 44.52},
        },
    ).json["order"]
    client.post(f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher)
    client.post(f"/orders/{order['id']}/assign", json={"courierId": courier.id}, headers=dispatcher)
    client.post(
        "/courier/location",
        headers=courier_headers,
        json={"points": [{"lat": 40.18, "lon": 44.51, "capturedAt": "2026-11-22T10:00:00Z"}]},
    )
    client.post(
        f"/courier/orders/{order['id']}/status", json={"status": "picked_up"}, headers=courier_headers
    )
    token = client.post(f"/orders/{order['id']}/tracking", headers=dispatcher).json["token"]

    server, url = start_server(
        data,
        "dispatch",
        APPLIANCE_RATE_LIMITS="off",
        APPLIANCE_EVENT_STREAM_MAX=str(args.streams + 5),
        APPLIANCE_PROCESSES=str(args.processes),
        APPLIANCE_DISPATCH_DATABASE=args.database,
    )
    try:
        if not args.skip_track:
            track(args, url, token)
        event_delays(args, url, dispatcher)
    finally:
        stop_server(server)


def track(args: argparse.Namespace, url: str, token: str) -> None:
    latencies: list[float] = []
    lock = threading.Lock()

    def reader() -> None:
        session = requests.Session()
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            response = session.get(f"{url}/track/{token}", timeout=10)
            assert response.status_code == 200, response.text
            with lock:
                latencies.append(time.perf_counter() - started)

    threads = [threading.Thread(target=reader) for _ in range(args.clients)]
    wall = run_together(threads)
    print(
        f"GET /track/{{token}}: {len(latencies) / wall:.0f} req/s with {args.clients} clients, "
        f"p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms"
    )


def event_delays(args: argparse.Namespace, url: str, dispatcher: dict[str, str]) -> None:
    draft = {"recipientName": "R", "recipientPhone": "+37400000000", "addressLabelHy": "A"}
    order_id = requests.post(
        f"{url}/orders", json={**draft, "pin": {"lat": 40.19, "lon": 44.52}}, headers=dispatcher, timeout=10
    ).json()["order"]["id"]  # a draft: the one the dispatcher edits
    cursor = requests.get(f"{url}/events/latest-cursor", headers=dispatcher, timeout=5).json()["cursor"]
    ready = threading.Barrier(args.streams + 1)
    lock = threading.Lock()
    arrivals: list[list[float]] = []  # per stream, when each order.updated arrived

    def listen() -> None:
        mine: list[float] = []
        with lock:
            arrivals.append(mine)
        with requests.get(
            f"{url}/events?cursor={cursor}", headers=dispatcher, stream=True, timeout=60
        ) as response:
            lines = response.iter_lines()
            next(lines)  # the opening "retry" line: the stream is live
            ready.wait()
            for line in lines:
                if line.startswith(b"event: order.updated"):
                    mine.append(time.monotonic())
                    if len(mine) == args.changes:
                        return

    listeners = [threading.Thread(target=listen, daemon=True) for _ in range(args.streams)]
    for t in listeners:
        t.start()
    ready.wait()
    time.sleep(0.5)
    session = requests.Session()
    changed: list[float] = []
    for n in range(args.changes):
        changed.append(time.monotonic())
        response = session.patch(
            f"{url}/orders/{order_id}", json={"recipientName": f"R {n}"}, headers=dispatcher, timeout=10
        )
        assert response.status_code == 200, response.text
        time.sleep(0.35)
    for t in listeners:
        t.join(15)
    delays = [a - c for stream in arrivals for a, c in zip(stream, changed, strict=False)]
    missing = args.streams * args.changes - len(delays)
    backend = "PostgreSQL" if args.database else "SQLite"
    print(
        f"order change -> event on {args.streams} open streams ({backend}, {args.processes} serving process"
        f"{'es' if args.processes > 1 else ''}, {args.changes} changes): "
        f"p50 {percentile(delays, 0.5) * 1000:.0f} ms, p99 {percentile(delays, 0.99) * 1000:.0f} ms, "
        f"max {max(delays) * 1000:.0f} ms, {len(delays)} received, {missing} missing"
    )


if __name__ == "__main__":
    main()
