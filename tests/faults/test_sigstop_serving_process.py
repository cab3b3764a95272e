"""A serving process that stops answering (SIGSTOP) is taken out of the rotation by its parent
and replaced when it does not come back (issue 32: after `kill -STOP` of one of two serving
processes, dispatch answered no new connection for about 10 s and the engine's /health/live none
for 20 s: the frozen process's connection count stayed low, so the other stopped accepting).

A real `appliance serve` with two serving processes and a short heartbeat (2 s; replaced after
6 s). One process is stopped; keep-alive clients then gather on the other (which, before, made it
leave its listener to the frozen one); every fresh connection on both ports is still answered,
the stopped process is killed and a new one started, which serves too."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
import requests

from tests.crash.harness import start_server

pytestmark = pytest.mark.server


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(child) for child in text)
    return found


def _wait_for(check, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.1)


def _fresh(url: str) -> int:
    """One request on a new connection (closed after it)."""
    return requests.get(url, headers={"Connection": "close"}, timeout=8).status_code


def test_a_stopped_serving_process_is_taken_out_of_rotation_then_replaced(data_dir) -> None:
    server = start_server(
        data_dir,
        "--processes",
        "2",
        env={"APPLIANCE_HEARTBEAT_SECONDS": "2", "APPLIANCE_REPLACE_AFTER_SECONDS": "6"},
    )
    sessions: list[requests.Session] = []
    stopped = None
    began = time.monotonic()
    try:
        _wait_for(lambda: len(_children(server.process.pid)) == 2)
        # Both serve (serve says "listening" once every process does): a process stopped while it
        # was still starting had never beaten, and was neither taken out nor replaced (CI, under
        # load: "not every serving process started within 60 s").
        _wait_for(lambda: "engine listening on" in server.log.read_text())
        first = _children(server.process.pid)
        stopped = sorted(first)[1]
        os.kill(stopped, signal.SIGSTOP)
        began = time.monotonic()
        answers = []
        for _ in range(8):
            # Keep-alive clients that stay connected: all of them on the process still running.
            session = requests.Session()
            answers.append(session.get(f"{server.dispatch}/openapi.json", timeout=8).status_code)
            sessions.append(session)
            answers.append(_fresh(f"{server.dispatch}/courier/me"))  # 401: answered, unauthenticated
            answers.append(_fresh(f"{server.engine}/health/live"))
        assert answers.count(200) == 16 and answers.count(401) == 8, answers

        # Not back within replace_after_seconds: killed, and another process serves in its place.
        _wait_for(lambda: not Path(f"/proc/{stopped}").exists() or _zombie(stopped))
        _wait_for(lambda: len(_children(server.process.pid) - {stopped}) == 2)
        replacement = _children(server.process.pid) - first
        assert len(replacement) == 1
        for _ in range(6):
            assert _fresh(f"{server.engine}/health/live") == 200
            assert _fresh(f"{server.dispatch}/courier/me") == 401
    except Exception:
        # The server's own account of those seconds, for whoever meets a failure here next.
        print(f"{time.monotonic() - began:.1f} s after the stop (or the start); server log:")
        print(server.log.read_text()[-6000:])
        raise
    finally:
        for session in sessions:
            session.close()
        if stopped is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(stopped, signal.SIGCONT)
        server.stop()
    log = server.log.read_text()
    assert "out of rotation until it answers" in log and "killing it to start another" in log, log[-3000:]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped meanwhile
        return True
