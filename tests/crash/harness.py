"""A real `appliance serve` in its own process group, for the crash and backup tests."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
from pathlib import Path

import requests

from tests.conftest import free_port, serve_command


@dataclasses.dataclass
class Server:
    process: subprocess.Popen
    dispatch_port: int
    engine_port: int
    log: Path

    @property
    def dispatch(self) -> str:
        return f"http://127.0.0.1:{self.dispatch_port}"

    @property
    def engine(self) -> str:
        return f"http://127.0.0.1:{self.engine_port}"

    def kill_group(self) -> None:
        """kill -9 of every process of the server (the supervisor and its serving processes)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill_group()
        return self.process.returncode


def start_server(
    data_dir: Path, *extra: str, env: dict[str, str] | None = None, timeout: float = 90
) -> Server:
    """Start the server on ``data_dir`` (new session, so one killpg reaches all of it) and wait until
    both ports answer."""
    dispatch_port, engine_port = free_port(), free_port()
    log = data_dir.parent / f"server-{data_dir.name}-{dispatch_port}.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            serve_command(data_dir, dispatch_port, engine_port, *extra),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    server = Server(process, dispatch_port, engine_port, log)
    deadline = time.monotonic() + timeout
    for url in (f"{server.engine}/health/live", f"{server.dispatch}/openapi.json"):
        while True:
            if process.poll() is not None:
                raise AssertionError(f"server exited: {log.read_text()[-3000:]}")
            try:
                if requests.get(url, timeout=2).status_code < 500:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            if time.monotonic() > deadline:
                server.kill_group()
                raise AssertionError(f"{url} did not answer: {log.read_text()[-3000:]}")
            time.sleep(0.1)
    return server
