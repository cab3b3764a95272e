"""What counting a request for /metrics costs: the after-request hook in process.

    python bench/metrics/run.py

Measures, on the engine's GET /health/live through Flask's test client, the time per request with
the metrics hook and with it removed (same app, same run, interleaved; noisy on a shared machine), the hook
called alone in a request context, and its counting (HttpMetrics.observe) alone. Prints microseconds per request.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common.metrics import HttpMetrics  # noqa: E402
from appliance.engine.app import create_app  # noqa: E402
from appliance.settings import load_settings  # noqa: E402

ROUNDS, REQUESTS, CALLS = 7, 2000, 200_000


def per_request(client) -> float:
    started = time.perf_counter()
    for _ in range(REQUESTS):
        client.get("/health/live")
    return (time.perf_counter() - started) / REQUESTS * 1e6


def main() -> None:
    settings = load_settings({"data_dir": tempfile.mkdtemp(prefix="bench-metrics-")}, environ={})
    migrate_all(settings)
    app = create_app(settings)
    client = app.test_client()
    hooks = app.after_request_funcs[None]
    count = next(f for f in hooks if f.__name__ == "_count")
    with_hook, without_hook = [], []
    for round_number in range(ROUNDS):
        # Alternate which goes first, so that neither gains from running second.
        for present in (True, False) if round_number % 2 else (False, True):
            if not present:
                hooks.remove(count)
            (with_hook if present else without_hook).append(per_request(client))
            if not present:
                hooks.append(count)
    response = app.response_class("{}", mimetype="application/json")
    with app.test_request_context("/health/live"):
        from flask import g, request

        request.url_rule = next(r for r in app.url_map.iter_rules() if r.rule == "/health/live")
        g.started = time.perf_counter()
        started = time.perf_counter()
        for _ in range(CALLS):
            count(response)
        hook = (time.perf_counter() - started) / CALLS * 1e6
    http: HttpMetrics = app.extensions["metrics"]
    started = time.perf_counter()
    for _ in range(CALLS):
        http.observe("GET", "/health/live", 200, 0.001)
    observe = (time.perf_counter() - started) / CALLS * 1e6
    a, b = statistics.median(with_hook), statistics.median(without_hook)
    print(f"GET /health/live with the metrics hook     {a:8.1f} µs/request (median of {ROUNDS} x {REQUESTS})")
    print(f"GET /health/live without it                {b:8.1f} µs/request")
    print(f"difference                                 {a - b:8.1f} µs/request")
    print(f"the hook alone, in a request context       {hook:8.2f} µs/call")
    print(f"HttpMetrics.observe alone                  {observe:8.2f} µs/call")


if __name__ == "__main__":
    main()
