"""A real SMPP 3.4 server for the recipient-message tests: tests/dispatch/smpp_server.js run by
node over the npm package `smpp` (installed into .tools by `make setup`, as anvil is)."""

from __future__ import annotations

import contextlib
import json
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / ".tools" / "node_modules" / "smpp" / "package.json"
SCRIPT = Path(__file__).with_name("smpp_server.js")
SYSTEM_ID = "arev"
PASSWORD = "s3cret!"


class SmppServer:
    def __init__(self, port: int, process: subprocess.Popen) -> None:
        self.port = port
        self.process = process
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                self.events.put(json.loads(line))

    def wait_for(self, event: str, timeout: float = 15.0) -> dict[str, Any]:
        """The next PDU of this kind the server reports (earlier ones of other kinds are kept)."""
        for seen in self.seen:
            if seen["event"] == event:
                self.seen.remove(seen)
                return seen
        deadline = time.monotonic() + timeout
        while True:
            try:
                got = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the SMPP server saw no {event}") from None
            if got["event"] == event:
                return got
            self.seen.append(got)

    def drain(self) -> list[dict[str, Any]]:
        while True:
            try:
                self.seen.append(self.events.get_nowait())
            except queue.Empty:
                return list(self.seen)


@contextlib.contextmanager
def running_smpp(
    port: int, *, receipt_delay_ms: int = 100, tls: tuple[Path, Path] | None = None
) -> Iterator[SmppServer]:
    """The server on 127.0.0.1:port; ``tls`` (certificate, key) makes it TLS from the first byte."""
    node = shutil.which("node")
    if node is None or not PACKAGE.exists():
        pytest.skip("the npm package smpp is not installed: `make setup` installs it (needs npm)")
    process = subprocess.Popen(
        [node, str(SCRIPT), str(port), SYSTEM_ID, PASSWORD, str(receipt_delay_ms), *map(str, tls or ())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    server = SmppServer(port, process)
    try:
        server.wait_for("listening")
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
