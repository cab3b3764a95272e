"""The data directory is owner-only (issue 33): every command creates files 0600 and folders 0700
whatever the caller's umask, and `serve` tightens what was left readable, saying so in its log."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

from appliance.serving.process import _private_data_dir


def _modes(root: Path) -> dict[str, int]:
    paths = [root, *root.rglob("*")]
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in paths if not p.is_symlink()}


def test_appliance_init_creates_an_owner_only_data_directory_under_a_permissive_umask(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = subprocess.run(
        [sys.executable, "-m", "appliance", "init", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert done.returncode == 0, done.stderr
    modes = _modes(data)
    assert "dispatch.db" in modes and "engine.db" in modes
    assert {name: oct(mode) for name, mode in modes.items() if mode & 0o077} == {}


def test_serve_tightens_what_was_left_readable_and_logs_it(settings, caplog, tmp_path: Path) -> None:
    data = settings.data_dir
    (data / "outbox").mkdir(mode=0o755, exist_ok=True)
    (data / "outbox" / "old.eml").write_text("a sign-in link")
    for path in (data, data / "outbox", data / "outbox" / "old.eml", data / "dispatch.db"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    outside = tmp_path / "shared-roads"
    outside.mkdir(mode=0o755)
    outside.chmod(0o755)
    (data / "roads-link").symlink_to(outside)
    previous = os.umask(0o022)
    try:
        with caplog.at_level(logging.WARNING, logger="appliance.files"):
            _private_data_dir(settings)
        assert os.umask(0o022) == 0o077  # serve leaves the process creating owner-only files
    finally:
        os.umask(previous)
    assert {name: oct(mode) for name, mode in _modes(data).items() if mode & 0o077} == {}
    assert stat.S_IMODE((data / "outbox" / "old.eml").stat().st_mode) == 0o600
    assert stat.S_IMODE(outside.stat().st_mode) == 0o755  # a link's target is not ours to change
    # the line names the first few paths and counts the rest (on PostgreSQL the data directory also
    # holds the appliance.toml naming the test's databases, so old.eml may be among "N more")
    assert "readable by other users, now owner-only" in caplog.text
    assert "outbox" in caplog.text and "dispatch.db" in caplog.text
