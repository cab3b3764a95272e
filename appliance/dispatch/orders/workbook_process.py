"""Start, feed, bound and read the workbook reader's child process (workbook_child.py).

The child is a fresh interpreter (``sys.executable``: the venv's Python with ``-m appliance``, or
the frozen executable itself), never a fork of the serving process: a fork of a process with
threads may inherit a lock some other thread held, and would carry the listening sockets, the
database connections and every secret in memory. It gets no environment but its locale (and, from
a source tree, the path to this package), so nothing secret of ``serve``'s environment either.

Bounds: the child's address space (MEMORY_BYTES), its CPU time (CPU_SECONDS) and wall-clock time
(WALL_SECONDS: killed after), what it may answer (MAX_ANSWER bytes), and CONCURRENT children per
serving process at a time (an import waits for a slot). A child that dies, is killed or answers
out of protocol is a WorkbookRefused, never rows: nothing of such a file is imported.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from appliance.dispatch.orders.workbook_child import COMMAND, REASONS, Limits, decode_cell

log = logging.getLogger("appliance.dispatch.orders")

MEMORY_BYTES = 512 * 1024 * 1024  # the largest upload a child reads takes about 230 MB (bench)
CPU_SECONDS = 30
WALL_SECONDS = 60
# JSON of the rows: a full 10,000-row file of long addresses and notes is about 10 MB.
MAX_ANSWER = 100 * 1024 * 1024
CONCURRENT = 2
_READ = 256 * 1024
_MAX_LINE = 4 * 1024 * 1024  # a row: 256 cells of 2,000 characters, escaped, is well under
_STDERR_KEPT = 4096

_slots = threading.BoundedSemaphore(CONCURRENT)


class WorkbookRefused(Exception):
    """The child's reason (workbook_child.REASONS, or "time", "answer"), with its facts."""

    def __init__(self, reason: str, **facts: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.facts = facts


def read_rows(data: bytes, *, max_bytes: int, max_rows: int, max_columns: int) -> list[list[Any]]:
    """The first sheet's rows as the child read them (the header first)."""
    limits = Limits(
        max_bytes=max_bytes,
        max_rows=max_rows,
        max_columns=max_columns,
        memory_bytes=MEMORY_BYTES,
        cpu_seconds=CPU_SECONDS,
    )
    with _slots:
        return _Child(limits).read(data)


def command(limits: Limits) -> list[str]:
    argument = json.dumps(dataclasses.asdict(limits))
    if getattr(sys, "frozen", False):  # PyInstaller: sys.executable is the appliance itself
        return [sys.executable, COMMAND, argument]
    return [sys.executable, "-m", "appliance", COMMAND, argument]


def environment() -> dict[str, str]:
    env = {"LC_ALL": "C.UTF-8", "PATH": os.defpath, "PYTHONDONTWRITEBYTECODE": "1"}
    if not getattr(sys, "frozen", False):
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])  # the folder holding appliance/
    return env


class _Child:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.rows: list[list[Any]] = []
        self.answer: dict[str, Any] | None = None
        self.pending = b""
        self.answered = 0
        self.stderr = b""
        self.killed_for_time = False
        self.stopped: WorkbookRefused | None = None  # why this side stopped it
        self.deadline = time.monotonic() + WALL_SECONDS

    def read(self, data: bytes) -> list[list[Any]]:
        process = subprocess.Popen(
            command(self.limits),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
            close_fds=True,
            start_new_session=True,  # a terminal's Ctrl-C is serve's to handle, not the child's
        )
        try:
            self._exchange(process, data)
            status = process.wait(timeout=max(0.0, self.deadline - time.monotonic()) + 1)
        except subprocess.TimeoutExpired:
            self.killed_for_time = True
            status = None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        return self._outcome(process.returncode if status is None else status)

    def _exchange(self, process: subprocess.Popen[bytes], data: bytes) -> None:
        """Write the workbook and read the answer at once (the pipes' buffers are small)."""
        assert process.stdin and process.stdout and process.stderr
        written = 0
        view = memoryview(data)
        os.set_blocking(process.stdin.fileno(), False)
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdin, selectors.EVENT_WRITE)
            selector.register(process.stdout, selectors.EVENT_READ)
            selector.register(process.stderr, selectors.EVENT_READ)
            while selector.get_map():
                left = self.deadline - time.monotonic()
                if left <= 0:
                    self.killed_for_time = True
                    process.kill()
                    return
                for key, _events in selector.select(left):
                    if key.fileobj is process.stdin:
                        try:
                            written += os.write(process.stdin.fileno(), view[written : written + _READ])
                        except BrokenPipeError:  # it stopped reading: its answer says why
                            written = len(data)
                        if written >= len(data):
                            selector.unregister(process.stdin)
                            process.stdin.close()
                        continue
                    chunk = os.read(key.fd, _READ)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    elif key.fileobj is process.stderr:
                        self.stderr = (self.stderr + chunk)[:_STDERR_KEPT]
                    elif not self._take(chunk):
                        process.kill()
                        return

    def _take(self, chunk: bytes) -> bool:
        """Read the rows in ``chunk``; False when the child must be stopped (too long an answer,
        or anything after its last line)."""
        self.answered += len(chunk)
        if self.answered > MAX_ANSWER:
            self.stopped = WorkbookRefused("answer")
            return False
        lines = (self.pending + chunk).split(b"\n")
        self.pending = lines.pop()
        if len(self.pending) > _MAX_LINE:
            self.stopped = WorkbookRefused("unreadable", error="ReaderProtocol")
            return False
        for line in lines:
            try:
                if self.answer is not None:
                    raise ValueError("a line after the last")
                value = json.loads(line)
                if isinstance(value, list):
                    self.rows.append([decode_cell(cell) for cell in value])
                elif isinstance(value, dict):
                    self.answer = value
                else:
                    raise ValueError(value)
            except (ValueError, TypeError, KeyError):  # not what workbook_child.py writes
                self.stopped = WorkbookRefused("unreadable", error="ReaderProtocol")
                return False
        return True

    def _outcome(self, status: int) -> list[list[Any]]:
        if self.stopped is not None:
            raise self.stopped
        if self.killed_for_time or status == -signal.SIGXCPU:
            raise WorkbookRefused("time")
        answer = self.answer or {}
        if status == 0 and answer == {"rows": len(self.rows)} and not self.pending:
            return self.rows
        if status == 0 and answer.get("refused") in REASONS:
            facts = {k: v for k, v in answer.items() if k != "refused"}
            raise WorkbookRefused(answer["refused"], **facts)
        # It died, or stopped without its last line: Rust aborts a failed allocation (SIGABRT).
        log.warning(
            "workbook reader ended with status %s without answering: %s",
            status,
            self.stderr.decode("utf-8", errors="replace").strip().splitlines()[:1],
        )
        if status in (-signal.SIGABRT, -signal.SIGKILL, -signal.SIGSEGV, -signal.SIGBUS):
            raise WorkbookRefused("memory")
        raise WorkbookRefused("unreadable", error="ReaderStopped")
