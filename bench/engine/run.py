"""Payout engine benchmark: signed submissions per second and GET detail latency with 8
concurrent clients on SQLite, and the cost of signature verification alone.

    python bench/engine/run.py [--seconds 10] [--clients 8]

Starts the real engine app with waitress on a free port in a temporary data directory, drives it
with the reference client (each request signed afresh), prints the figures and stops.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from support import percentile, run_together, start_server, stop_server  # noqa: E402

from appliance.cli.admin import migrate_all
from appliance.engine.app import create_app
from appliance.engine.auth.operators import create_operator
from appliance.engine.client import EngineClient
from appliance.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()

    data = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    settings = load_settings({"data_dir": str(data)}, environ={})
    migrate_all(settings)
    app = create_app(settings)
    with app.app_context():
        op = create_operator(app.extensions["engine"].master_key, "op_bench00001")
    server, url = start_server(data, "engine")

    submitted: list[list[str]] = [[] for _ in range(args.clients)]
    latencies: list[float] = []
    lock = threading.Lock()

    def submitter(n: int) -> None:
        client = EngineClient(url, op["operatorId"], op["secret"])
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline:
            payout_id = f"pyo_{n}x{secrets.token_hex(8)}"
            started = time.perf_counter()
            client.submit_payout(payout_id, "USDC", "1000", "0x" + "ab" * 20)
            with lock:
                latencies.append(time.perf_counter() - started)
            submitted[n].append(payout_id)

    threads = [threading.Thread(target=submitter, args=(n,)) for n in range(args.clients)]
    elapsed = run_together(threads)
    total = sum(len(s) for s in submitted)
    print(
        f"signed payout submissions: {total} in {elapsed:.1f} s with {args.clients} clients = "
        f"{total / elapsed:.0f} /s (p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms)"
    )

    detail: list[float] = []

    def reader(n: int) -> None:
        client = EngineClient(url, op["operatorId"], op["secret"])
        for payout_id in submitted[n][:300]:
            started = time.perf_counter()
            client.get_payout(payout_id)
            with lock:
                detail.append(time.perf_counter() - started)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(args.clients)]
    elapsed = run_together(threads)
    print(
        f"GET /v1/payouts/:id: {len(detail)} in {elapsed:.1f} s = {len(detail) / elapsed:.0f} /s, "
        f"p50 {percentile(detail, 0.5) * 1000:.2f} ms, p99 {percentile(detail, 0.99) * 1000:.2f} ms"
    )

    # Signature verification alone: the canonical string, the secret lookup and decryption, the
    # HMAC and the replay-cache insert, inside a request context without HTTP.
    from appliance.engine.auth.signature import verify_request

    client = EngineClient(url, op["operatorId"], op["secret"])
    rounds = 2000
    costs = []
    with app.app_context():
        for i in range(rounds):
            path = f"/v1/payouts/pyo_verify{i:06d}"
            headers = client.signed_headers("GET", path, b"", None)
            with app.test_request_context(path, headers=headers):
                started = time.perf_counter()
                verify_request()
                costs.append(time.perf_counter() - started)
    print(
        f"signature verification alone: mean {statistics.mean(costs) * 1e6:.0f} us, "
        f"p50 {percentile(costs, 0.5) * 1e6:.0f} us, p99 {percentile(costs, 0.99) * 1e6:.0f} us per request"
    )
    stop_server(server)


if __name__ == "__main__":
    main()
