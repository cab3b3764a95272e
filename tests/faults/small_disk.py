"""A small filesystem for the disk-full tests: a size-limited tmpfs mounted for one test (root only;
the tests skip cleanly elsewhere), and a filler file that takes every free byte."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(directory: Path, size_mb: int) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0700", "tmpfs", str(directory)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)


def fill(path: Path, *, leave_bytes: int = 0) -> int:
    """Write zeros to ``path`` until the filesystem is full (or ``leave_bytes`` are left); the
    bytes written."""
    written = 0
    chunk = b"\0" * (256 * 1024)
    with open(path, "ab", buffering=0) as output:
        while True:
            free = os.statvfs(path).f_bavail * os.statvfs(path).f_frsize
            if free <= leave_bytes:
                return written
            piece = chunk[: max(1, min(len(chunk), free - leave_bytes))]
            try:
                written += output.write(piece) or 0
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                return written
