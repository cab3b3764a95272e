"""An address index of an older format, upgraded by the appliance itself (issue 46).

The index's format changed (build.py ``INDEX_VERSION``; an index without the current one is
refused by the search, which would answer 503 until someone rebuilt the road data by hand). At
start (`appliance serve`, before the serving processes) and on the first search that meets such an
index, the appliance rebuilds the index alone from the extract the road data was built from
(``build.json``'s ``source``), when that file is still there: the roads themselves did not change,
so only ``addresses.sqlite`` is written again (to a temporary name and renamed into place, so a
search reads the old file or the new one). An exclusive flock of ``routing/index-upgrade.lock``
makes one process of the data directory rebuild it; the others go on without waiting. When the
extract is gone the log and the readiness answer (the ``routing`` check) say the exact command.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shlex
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from appliance.dispatch.geocoding.build import INDEX_NAME, INDEX_VERSION, build_index
from appliance.dispatch.routing.build import build_info, routing_dir

log = logging.getLogger("appliance.routing")
LOCK_NAME = "index-upgrade.lock"

State = Literal["current", "missing", "rebuilt", "rebuilding", "no_source", "failed"]


@dataclass(frozen=True)
class Outcome:
    state: State
    detail: str


def index_path(data_dir: Path) -> Path:
    return routing_dir(Path(data_dir)) / "current" / INDEX_NAME


def index_format(data_dir: Path) -> int | None:
    """The format of the data directory's address index (its ``user_version``); None without one."""
    path = index_path(data_dir)
    if not path.is_file():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()


def is_stale(data_dir: Path) -> bool:
    found = index_format(data_dir)
    return found is not None and found < INDEX_VERSION


def rebuild_command(data_dir: Path) -> str:
    """The command that rebuilds the road data and its index, as the operator types it."""
    source = (build_info(Path(data_dir)) or {}).get("source")
    pbf = shlex.quote(str(source)) if source else "EXTRACT.osm.pbf"
    return f"appliance routing build --pbf {pbf} --data-dir {shlex.quote(str(data_dir))}"


def _stale_words(data_dir: Path, found: int | None) -> str:
    return (
        f"the address index was built by an older version (format {found}; "
        f"this version reads {INDEX_VERSION})"
    )


def _no_source(data_dir: Path, found: int | None) -> str:
    source = (build_info(Path(data_dir)) or {}).get("source")
    where = f"the extract it was built from, {source}, is not there" if source else "no extract is recorded"
    return (
        f"{_stale_words(data_dir, found)} and {where} to rebuild it: address search answers 503 until "
        f"you run `{rebuild_command(data_dir)}`"
    )


def _lock_file(data_dir: Path) -> int:
    root = routing_dir(Path(data_dir))
    root.mkdir(parents=True, exist_ok=True)
    return os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)


def rebuilding(data_dir: Path) -> bool:
    """Whether another process holds the rebuild's lock now (a look of a moment: a rebuild that
    meets it then waits, see ``upgrade_stale_index``)."""
    fd = _lock_file(data_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def upgrade_stale_index(data_dir: Path, wait: bool = False) -> Outcome:
    """Rebuild an index of an older format from its recorded extract, once per data directory,
    logging what it does. Without ``wait`` another holder of the lock (a process rebuilding it)
    is left to it; with it (the background rebuild of a search, which a readiness probe's brief
    look at the lock must not turn away) the lock is waited for, and the index found current
    afterwards is left alone."""
    data_dir = Path(data_dir)
    if index_format(data_dir) is None:
        return Outcome("missing", "no address index")
    if not is_stale(data_dir):
        return Outcome("current", "the address index is current")
    fd = _lock_file(data_dir)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return Outcome("rebuilding", "the address index is being rebuilt by another process")
        found = index_format(data_dir)  # again, under the lock: another process may have just done it
        if found is None or found >= INDEX_VERSION:
            return Outcome("current", "the address index is current")
        source = (build_info(data_dir) or {}).get("source")
        if not source or not Path(source).is_file():
            detail = _no_source(data_dir, found)
            log.warning("address index: %s", detail)
            return Outcome("no_source", detail)
        log.warning("address index: %s: rebuilding it from %s", _stale_words(data_dir, found), source)
        started = time.monotonic()
        try:
            entries = build_index(Path(source), index_path(data_dir))
        except Exception as exc:  # a broken extract: the command is the way out
            detail = (
                f"{_stale_words(data_dir, found)} and rebuilding it from {source} failed ({exc}): "
                f"run `{rebuild_command(data_dir)}`"
            )
            log.error("address index: %s", detail)
            return Outcome("failed", detail)
        seconds = time.monotonic() - started
        detail = f"the address index was rebuilt from {source}: {entries} entries in {seconds:.1f} s"
        log.warning("address index: %s", detail)
        return Outcome("rebuilt", detail)
    finally:
        os.close(fd)  # releases the lock


def readiness(data_dir: Path) -> str | None:
    """What the readiness answer says about the index: None when it is current or absent (the
    road data's own check speaks for a missing build), else why search is unavailable and, when
    the appliance cannot mend it itself, the command."""
    found = index_format(data_dir)
    if found is None or found >= INDEX_VERSION:
        return None
    if rebuilding(data_dir):
        return f"{_stale_words(data_dir, found)}: it is being rebuilt; address search answers 503 until then"
    source = (build_info(Path(data_dir)) or {}).get("source")
    if source and Path(source).is_file():
        return (
            f"{_stale_words(data_dir, found)}: it is rebuilt from {source} at the next start or search "
            f"(or run `{rebuild_command(data_dir)}`)"
        )
    return _no_source(data_dir, found)


_started: set[Path] = set()
_started_lock = threading.Lock()


def upgrade_in_background(data_dir: Path) -> None:
    """On the first search that meets an old index: the rebuild on a thread of its own (the search
    answers 503 meanwhile), once per process and data directory."""
    key = Path(data_dir)
    with _started_lock:
        if key in _started:
            return
        _started.add(key)
    threading.Thread(
        target=upgrade_stale_index, args=(key,), kwargs={"wait": True}, name="index-upgrade", daemon=True
    ).start()
