"""Binary smoke, planning half: a route plan from the executable's own solvers (PyVRP's seed, then
OR-Tools), so the stripped native libraries and PyVRP inside the bundle are exercised.

    python .ci/smoke_plan.py BIN DATA_DIR DISPATCH_URL SERVE_LOG

Creates a company with the executable's `company create`, signs the owner in, adds two couriers and
six ready orders over HTTP, asks for a suggestion and checks that every order is planned and that
the server did not log a failed PyVRP seed (the solver answers with OR-Tools alone then).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

# Service-area points (Yerevan); the travel times may be straight-line ones: the solver is the point.
DEPOT = (40.1792, 44.4991)
PINS = [(40.1811, 44.5136), (40.1776, 44.5126), (40.1872, 44.5152), (40.1701, 44.5030), (40.1930, 44.4870)]
PINS.append((40.1750, 44.4900))


def call(url: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    request = urllib.request.Request(
        url + path, method=method, data=None if body is None else json.dumps(body).encode()
    )
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None


def main(binary: str, data_dir: str, url: str, serve_log: str) -> int:
    password = "smoke-owner-pass"
    subprocess.run(
        [binary, "company", "create", "--name", "Smoke Delivery", "--owner-email", "owner@smoke.example",
         "--owner-name", "Smoke Owner", "--owner-password", password, "--depot-name", "Depot",
         "--depot-address", "Republic Square", "--depot-lat", str(DEPOT[0]), "--depot-lon", str(DEPOT[1]),
         "--data-dir", data_dir, "--json"],
        check=True, capture_output=True,
    )  # fmt: skip
    token = call(url, "POST", "/auth/login", {"email": "owner@smoke.example", "password": password})[
        "accessToken"
    ]
    for number in (1, 2):
        courier = {"email": f"courier{number}@smoke.example", "password": "smoke-courier-pass"}
        call(url, "POST", "/couriers", {**courier, "displayName": f"Courier {number}"}, token)
    orders = []
    for number, (lat, lon) in enumerate(PINS, start=1):
        order = call(
            url,
            "POST",
            "/orders",
            {
                "recipientName": f"Recipient {number}",
                "recipientPhone": "+37491000000",
                "addressLabelHy": f"Address {number}",
                "pin": {"lat": lat, "lon": lon},
            },
            token,
        )["order"]
        call(url, "POST", f"/orders/{order['id']}/status", {"status": "ready"}, token)
        orders.append(order["id"])
    suggestion = call(url, "POST", "/plans/suggest", {"onShift": False}, token)  # the demo starts no shifts
    planned = sorted(stop["orderId"] for route in suggestion["routes"] for stop in route["stops"])
    routes = len(suggestion["routes"])
    print(f"plan: {len(planned)} of {len(orders)} orders on {routes} routes ({suggestion['method']} times)")
    if planned != sorted(orders) or suggestion["unassigned"]:
        print(f"plan: not every order was planned: {json.dumps(suggestion)}")
        return 1
    if "PyVRP seed failed" in Path(serve_log).read_text(errors="replace"):
        print("plan: PyVRP failed inside the executable (OR-Tools answered alone)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
