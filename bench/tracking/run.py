"""Tracking benchmark: GET /track/{token} requests per second with 8 clients, and the delay from
an order change to its event on 50 open event streams. The server runs in its own process
(`appliance serve --only dispatch`) on SQLite.

    python bench/tracking/run.py [--seconds 6] [--streams 50]
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
from support import percentile, start_server, stop_server  # noqa: E402

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
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-tracking-"))
    settings = load_settings({"data_dir": str(data), "rate_limits": "off"}, environ={})
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
        data, "dispatch", APPLIANCE_RATE_LIMITS="off", APPLIANCE_EVENT_STREAM_MAX=str(args.streams + 5)
    )
    try:
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
        began = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - began
        print(
            f"GET /track/{{token}}: {len(latencies) / wall:.0f} req/s with {args.clients} clients, "
            f"p50 {percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms"
        )

        cursor = requests.get(f"{url}/events/latest-cursor", headers=dispatcher, timeout=5).json()["cursor"]
        ready = threading.Barrier(args.streams + 1)
        arrivals: list[float] = []

        def listen() -> None:
            with requests.get(
                f"{url}/events?cursor={cursor}", headers=dispatcher, stream=True, timeout=30
            ) as response:
                lines = response.iter_lines()
                next(lines)  # the opening "retry" line: the stream is live
                ready.wait()
                for line in lines:
                    if line.startswith(b"event: order.status_changed"):
                        with lock:
                            arrivals.append(time.monotonic())
                        return

        listeners = [threading.Thread(target=listen) for _ in range(args.streams)]
        for t in listeners:
            t.start()
        ready.wait()
        time.sleep(0.5)
        changed = time.monotonic()
        requests.post(
            f"{url}/courier/orders/{order['id']}/status",
            json={"status": "arrived"},
            headers=courier_headers,
            timeout=10,
        )
        for t in listeners:
            t.join(15)
        delays = [a - changed for a in arrivals]
        print(
            f"order change -> event on {args.streams} open streams: {len(delays)} received, "
            f"p50 {percentile(delays, 0.5) * 1000:.0f} ms, p99 {percentile(delays, 0.99) * 1000:.0f} ms, "
            f"max {max(delays) * 1000:.0f} ms"
        )
    finally:
        stop_server(server)


if __name__ == "__main__":
    main()
