"""A real server: both listeners answer, and SIGTERM lets a request in flight finish."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.conftest import free_port

pytestmark = pytest.mark.server


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, int, int]:
    dispatch_port, engine_port = free_port(), free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--data-dir",
            str(tmp_path),
            "--dispatch-port",
            str(dispatch_port),
            "--engine-port",
            str(engine_port),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, dispatch_port, engine_port


def _wait(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read() if process.stderr else "server exited")
        try:
            requests.get(url, timeout=1)
            return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer")


def test_serve_answers_on_both_ports_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    process, dispatch_port, engine_port = _start(tmp_path)
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        assert requests.get(f"http://127.0.0.1:{engine_port}/health/ready", timeout=5).status_code == 200
        assert requests.get(f"http://127.0.0.1:{dispatch_port}/healthz", timeout=10).status_code in {200, 503}
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    assert process.returncode == 0
    assert f"dispatch listening on http://127.0.0.1:{dispatch_port}" in out
    assert f"engine listening on http://127.0.0.1:{engine_port}" in out


def test_a_request_in_flight_finishes_after_sigterm(tmp_path: Path) -> None:
    process, dispatch_port, _ = _start(tmp_path, "--only", "dispatch")
    try:
        _wait(f"http://127.0.0.1:{dispatch_port}/openapi.json", process)
        session = requests.Session()
        # /healthz runs the solver probe (a few hundred ms): signal while it is in flight.
        import threading

        result: dict[str, int] = {}

        def call() -> None:
            result["status"] = session.get(
                f"http://127.0.0.1:{dispatch_port}/healthz", timeout=20
            ).status_code

        thread = threading.Thread(target=call)
        thread.start()
        time.sleep(0.05)
        os.kill(process.pid, signal.SIGTERM)
        thread.join(20)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert result.get("status") in {200, 503}
    assert process.returncode == 0


def test_only_serves_one_service(tmp_path: Path) -> None:
    process, dispatch_port, engine_port = _start(tmp_path, "--only", "engine")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{dispatch_port}/healthz", timeout=2)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    assert process.returncode == 0
