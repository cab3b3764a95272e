"""Slow clients against a real `appliance serve` and the bare Flask + waitress + SQLite app (issue 32).

SLOW sockets per port (default 500, from three loopback addresses, so that each stays within
connections_per_client) send a request line and then one byte every 3 s, never finishing their
headers. Meanwhile PROBES fresh requests per port (a new connection each, 5 s timeout) are timed:
the table prints how many were answered, p50, p99 and max, for 1, 2 and 4 serving processes, and
for the bare app (waitress defaults: select(), 100 connections, no per-request read bound) in the
same run.

    python bench/slow_clients/run.py [--slow 500] [--probes 100]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from bench.support import free_port, percentile  # noqa: E402

TRICKLE_SECONDS = 3.0


def _probe(port: int, path: str) -> float | None:
    """Milliseconds to a fresh connection's answer (status line), or None when none came in 5 s."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            if not sock.recv(16).startswith(b"HTTP/1.1 "):
                return None
    except OSError:
        return None
    return (time.monotonic() - started) * 1000


def _wait(port: int, path: str, process: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited ({process.returncode})")
        if _probe(port, path) is not None:
            return
        time.sleep(0.3)
    raise SystemExit(f"port {port} never answered")


@contextmanager
def _slow_clients(ports: list[int], count: int) -> Iterator[None]:
    sockets: list[socket.socket] = []
    stop = threading.Event()
    for port in ports:
        for number in range(count):
            try:
                sock = socket.create_connection(
                    ("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{2 + number % 3}", 0)
                )
                sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                sockets.append(sock)
            except OSError:
                pass  # refused or not accepted: a server that bounds its clients

    def trickle() -> None:
        while not stop.wait(TRICKLE_SECONDS):
            for sock in sockets:
                try:
                    sock.sendall(b"X")
                except OSError:
                    pass

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        time.sleep(1)
        yield
    finally:
        stop.set()
        thread.join()
        for sock in sockets:
            sock.close()


def _row(label: str, timings: list[float | None]) -> None:
    answered = [ms for ms in timings if ms is not None]
    figures = (
        f"{percentile(answered, 0.5):8.1f} {percentile(answered, 0.99):8.1f} {max(answered):8.1f}"
        if answered
        else f"{'-':>8} {'-':>8} {'-':>8}"
    )
    print(f"{label:44} {len(answered):>4}/{len(timings):<4} {figures}", flush=True)


def _measure(label: str, ports: dict[str, tuple[int, str]], args: argparse.Namespace) -> None:
    with _slow_clients([port for port, _ in ports.values()], args.slow):
        for name, (port, path) in ports.items():
            _row(f"{label} {name}", [_probe(port, path) for _ in range(args.probes)])


def run_appliance(processes: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        appliance = [sys.executable, "-m", "appliance"]
        subprocess.run([*appliance, "init", "--data-dir", str(data)], check=True, capture_output=True)
        dispatch, engine = free_port(), free_port()
        ports = ["--dispatch-port", str(dispatch), "--engine-port", str(engine)]
        with open(Path(folder) / "serve.log", "w") as log:
            server = subprocess.Popen(
                [*appliance, "serve", "--data-dir", str(data), *ports, "--processes", str(processes)],
                stdout=log,
                stderr=log,
                cwd=ROOT,
            )
            try:
                _wait(dispatch, "/healthz", server)
                _wait(engine, "/health/live", server)
                probes = {"dispatch": (dispatch, "/openapi.json"), "engine": (engine, "/health/live")}
                _measure(f"appliance, {processes} process{'es' if processes > 1 else ''}", probes, args)
            finally:
                server.terminate()
                server.wait(30)


def run_bare(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        with open(Path(folder) / "bare.log", "w") as log:
            bare = subprocess.Popen(
                [sys.executable, str(ROOT / "bench/http/bare_app.py"), str(port), f"{folder}/bare.db", "8"],
                stdout=log,
                stderr=log,
            )
            try:
                _wait(port, "/ok", bare)
                _measure("bare Flask + waitress + SQLite", {"GET /ok": (port, "/ok")}, args)
            finally:
                bare.terminate()
                bare.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=500, help="slow sockets per port")
    parser.add_argument("--probes", type=int, default=100, help="fresh requests per port")
    args = parser.parse_args()
    print(
        f"{args.slow} slow sockets per port (a byte every {TRICKLE_SECONDS:.0f} s), {args.probes} fresh requests"
    )
    print(f"{'':44} {'answered':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    run_bare(args)
    for processes in (1, 2, 4):
        run_appliance(processes, args)


if __name__ == "__main__":
    main()
