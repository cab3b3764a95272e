"""What the benchmarks share: percentiles, a free port, and the real server in its own process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def run_together(threads: list[threading.Thread]) -> float:
    """Start every thread, wait for all of them, and return the wall time in seconds."""
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - began


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(data: Path, only: str, **env: str) -> tuple[subprocess.Popen, str]:
    """`appliance serve --only SERVICE` on a free port, in its own process (so the benchmark's
    clients do not share its GIL); returns the process and its base URL once it answers."""
    port = free_port()
    flag = "--dispatch-port" if only == "dispatch" else "--engine-port"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--only",
            only,
            "--data-dir",
            str(data),
            flag,
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "APPLIANCE_LOG_LEVEL": "WARNING", **env},
    )
    url = f"http://127.0.0.1:{port}"
    probe = "/openapi.json"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(url + probe, timeout=2)
            return process, url
        except (requests.ConnectionError, requests.Timeout):  # the port accepts before the processes are up
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the server did not start") from None
            time.sleep(0.2)


def stop_server(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(30)
