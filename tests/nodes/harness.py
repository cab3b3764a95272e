"""Two appliance nodes, each a real `appliance serve` in its own process group with its own data
directory and ports, sharing what a deployment on several hosts shares: one PostgreSQL server
(both services' databases), one S3-compatible store (moto's server), one Redis (rate limits,
Debian's redis-server) and one Ethereum JSON-RPC node (anvil). Nothing else is shared: each node
has its own outbox, its own in-memory caches and its own background workers."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import free_port, serve_command
from tests.crash.harness import Server


@dataclasses.dataclass
class Node:
    name: str
    data_dir: Path
    server: Server

    @property
    def dispatch(self) -> str:
        return self.server.dispatch

    @property
    def engine(self) -> str:
        return self.server.engine

    def outbox(self) -> list[Path]:
        directory = self.data_dir / "outbox"
        return sorted(directory.glob("*.eml")) if directory.is_dir() else []

    def log(self) -> str:
        return self.server.log.read_text(errors="replace")


@contextlib.contextmanager
def running_redis(directory: Path) -> Iterator[str]:
    """Debian's redis-server on a free loopback port, nothing written to disk."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/system-packages.sh)")
    import redis

    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def running_s3(bucket: str) -> Iterator[str]:
    """moto's S3 server on a free loopback port, with ``bucket`` made."""
    from minio import Minio
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        Minio(f"127.0.0.1:{port}", access_key="test", secret_key="testsecret", secure=False).make_bucket(
            bucket
        )
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(Exception):
            server.stop()


def write_settings(data_dir: Path, settings: dict[str, Any]) -> None:
    """appliance.toml with ``settings`` (scalars, and the chains as a JSON string: the same list)."""
    lines = []
    for key, value in settings.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, int | float):
            lines.append(f"{key} = {value}")
        else:
            lines.append(f"{key} = {json.dumps(str(value))}")
    (data_dir / "appliance.toml").write_text("\n".join(lines) + "\n")


def _environment(extra: dict[str, str]) -> dict[str, str]:
    # A node sees only its own settings: the tests' APPLIANCE_TEST_* variables are no settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    return {**env, **extra}


def launch(name: str, data_dir: Path, env: dict[str, str]) -> Node:
    """Start `appliance serve` on ``data_dir`` (one serving process) in a new session; returns at once."""
    dispatch_port, engine_port = free_port(), free_port()
    log = data_dir.parent / f"node-{name}.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            serve_command(data_dir, dispatch_port, engine_port, "--processes", "1"),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_environment(env),
        )
    return Node(name, data_dir, Server(process, dispatch_port, engine_port, log))


def wait_ready(nodes: list[Node], timeout: float = 120) -> None:
    """Until every node answers on both ports (each migrates first, all at once on one database)."""
    deadline = time.monotonic() + timeout
    for node in nodes:
        for url in (f"{node.engine}/health/live", f"{node.dispatch}/openapi.json"):
            while True:
                if node.server.process.poll() is not None:
                    raise AssertionError(f"node {node.name} exited: {node.log()[-3000:]}")
                try:
                    if requests.get(url, timeout=2).status_code == 200:
                        break
                except (requests.ConnectionError, requests.Timeout):
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(f"node {node.name}: {url} did not answer: {node.log()[-3000:]}")
                time.sleep(0.1)


def until(what: str, check, seconds: float = 60, pause: float = 0.2):
    """Call ``check`` until it returns something true; fail naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {seconds} s (last: {result!r})")
        time.sleep(pause)
