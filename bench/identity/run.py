"""Sign-in benchmark: POST /auth/login and GET /me requests per second with 8 concurrent clients on
SQLite, with p50/p99 latency. Starts the real dispatch app with waitress on a free port.

    python bench/identity/run.py [--seconds 6] [--clients 8]
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

import requests  # noqa: E402
from support import percentile, run_together, start_server, stop_server  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common.db import connection  # noqa: E402
from appliance.dispatch.app import create_app  # noqa: E402
from appliance.dispatch.company.admin import create_company_from_options  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.settings import load_settings  # noqa: E402

PASSWORD = "bench-password-1"


def drive(name: str, clients: int, seconds: float, call) -> None:
    latencies: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        session = requests.Session()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            response = call(session)
            elapsed = time.perf_counter() - started
            if response.status_code != 200:
                raise SystemExit(f"{name}: {response.status_code} {response.text[:200]}")
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    wall = run_together(threads)
    print(
        f"{name:<16} {len(latencies) / wall:8.0f} req/s   p50 {percentile(latencies, 0.5) * 1000:7.2f} ms   "
        f"p99 {percentile(latencies, 0.99) * 1000:7.2f} ms   ({len(latencies)} requests, {clients} clients)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-identity-"))
    settings = load_settings(
        {"data_dir": str(data), "rate_limits": "off", "log_level": "WARNING"}, environ={}
    )
    migrate_all(settings)
    app = create_app(settings)
    with connection(database):
        create_company_from_options(
            name="Bench",
            city="Yerevan",
            phone=None,
            owner_email="bench@example.am",
            owner_name="Bench",
            owner_password=PASSWORD,
            depot_name="Main",
            depot_address="Abovyan 1",
            depot_lat=40.18,
            depot_lon=44.51,
        )
    del app
    server, url = start_server(data, "dispatch", APPLIANCE_RATE_LIMITS="off")
    credentials = {"email": "bench@example.am", "password": PASSWORD}
    token = requests.post(f"{url}/auth/login", json=credentials, timeout=10).json()["accessToken"]
    headers = {"Authorization": f"Bearer {token}"}
    drive(
        "POST /auth/login",
        args.clients,
        args.seconds,
        lambda s: s.post(f"{url}/auth/login", json=credentials, timeout=10),
    )
    drive("GET /me", args.clients, args.seconds, lambda s: s.get(f"{url}/me", headers=headers, timeout=10))
    drive("GET /me", 1, args.seconds, lambda s: s.get(f"{url}/me", headers=headers, timeout=10))
    stop_server(server)


if __name__ == "__main__":
    main()
