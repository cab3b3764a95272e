"""`appliance map build`: an OpenStreetMap extract → <data_dir>/tiles.mbtiles with tilemaker.

tilemaker runs with the configuration shipped beside this module (config.json, process.lua; see
NOTICE.md) and writes into a temporary file in the data directory; the file is swapped in with an
atomic rename only when tilemaker succeeded and the result holds tiles, so a running server never
sees a half-written file and a failed build keeps the previous one. The extract's bounds are
written into the metadata from the tiles themselves (extracts without a bbox header otherwise get
0,0,0,0), together with where and when the tiles were built."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from appliance.common import clock
from appliance.dispatch.tiles.mbtiles import (
    read_metadata,
    tile_to_lonlat,
    tiles_path,
)

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "config.json"
PROCESS = HERE / "process.lua"
# Seconds between two "writing tile i of n" progress lines.
PROGRESS_EVERY = 1.0
_OSM_PBF_MAGIC = b"OSMHeader"


class TilesBuildError(Exception):
    pass


def _set_metadata(conn: sqlite3.Connection, values: dict[str, str]) -> None:
    for name, value in values.items():
        conn.execute("DELETE FROM metadata WHERE name = ?", (name,))
        conn.execute("INSERT INTO metadata (name, value) VALUES (?, ?)", (name, value))


def _finish(path: Path, stamp: dict[str, str]) -> None:
    """Write bounds and centre computed from the tiles, and where/when they were built."""
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        zoom = conn.execute("SELECT MAX(zoom_level) FROM tiles").fetchone()[0]
        if zoom is None:
            raise TilesBuildError("tilemaker wrote no tiles: does the extract hold any map data?")
        xmin, xmax, ymin, ymax = conn.execute(
            "SELECT MIN(tile_column), MAX(tile_column), MIN(tile_row), MAX(tile_row) FROM tiles"
            " WHERE zoom_level = ?",
            (zoom,),
        ).fetchone()
        # MBTiles rows are TMS (y counted from the south); convert to XYZ before taking latitudes.
        top, bottom = (2**zoom - 1 - ymax), (2**zoom - 1 - ymin) + 1
        west, north = tile_to_lonlat(xmin, top, zoom)
        east, south = tile_to_lonlat(xmax + 1, bottom, zoom)
        _set_metadata(
            conn,
            {
                "bounds": f"{west:.6f},{south:.6f},{east:.6f},{north:.6f}",
                "center": f"{(west + east) / 2:.6f},{(south + north) / 2:.6f},{min(14, zoom)}",
                **stamp,
            },
        )


def _check_input(pbf: Path) -> None:
    if not pbf.is_file():
        raise TilesBuildError(f"{pbf}: no such file")
    with pbf.open("rb") as handle:
        head = handle.read(64)
    # An .osm.pbf starts with a 4-byte length and a BlobHeader whose type is "OSMHeader".
    if _OSM_PBF_MAGIC not in head:
        raise TilesBuildError(f"{pbf}: not an OpenStreetMap extract (.osm.pbf)")


def _relay(stream: IO[str], progress: Callable[[str], None], tail: list[str]) -> None:
    """Pass tilemaker's stage lines on as progress; its \\r-updated counters at most once a second."""
    last = 0.0
    buffer = ""
    while chunk := stream.read(256):
        buffer += chunk
        *lines, buffer = re.split(r"[\r\n]", buffer)
        for raw in lines:
            line = raw.strip()
            if not line:
                continue
            tail.append(line)
            del tail[:-5]
            counter = line.startswith(("Block ", "(", "Zoom level"))
            if line.startswith("Layer "):
                continue  # the configuration's layer list: not progress
            if counter and time.monotonic() - last < PROGRESS_EVERY:
                continue
            last = time.monotonic() if counter else last
            progress(f"tilemaker: {line}")
    if buffer.strip():
        tail.append(buffer.strip())


def build(pbf: Path, data_dir: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    """Build <data_dir>/tiles.mbtiles from ``pbf``; returns the contract's ``tiles`` object."""
    pbf = Path(pbf).resolve()
    _check_input(pbf)
    tilemaker = shutil.which("tilemaker")
    if tilemaker is None:
        raise TilesBuildError("tilemaker is not installed (Debian package tilemaker)")
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    target = tiles_path(Path(data_dir).resolve())
    temp = target.with_name(f".tiles-{os.getpid()}.mbtiles")
    temp.unlink(missing_ok=True)
    started = time.monotonic()
    progress(f"tilemaker: building map tiles from {pbf}")
    tail: list[str] = []
    try:
        with subprocess.Popen(
            [
                tilemaker,
                "--input",
                str(pbf),
                "--output",
                str(temp),
                "--config",
                str(CONFIG),
                "--process",
                str(PROCESS),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            cwd=target.parent,
        ) as process:
            assert process.stdout is not None
            _relay(process.stdout, progress, tail)
            returncode = process.wait()
        if returncode != 0 or not temp.exists():
            raise TilesBuildError(f"tilemaker failed: {' | '.join(tail[-3:]) or f'exit {returncode}'}")
        built_at = clock.iso(clock.now()) or ""
        try:
            _finish(temp, {"appliance:source": str(pbf), "appliance:builtAt": built_at})
        except sqlite3.Error as exc:
            raise TilesBuildError(f"tilemaker wrote an unreadable MBTiles file: {exc}") from None
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
        for suffix in ("-journal", "-wal", "-shm"):
            temp.with_name(temp.name + suffix).unlink(missing_ok=True)
    meta = read_metadata(target)
    info = {
        "source": str(pbf),
        "builtAt": built_at,
        "seconds": round(time.monotonic() - started, 2),
        "minZoom": int(meta.get("minzoom", 0)),
        "maxZoom": int(meta.get("maxzoom", 14)),
    }
    progress(f"map tiles ready in {info['seconds']} s (zoom {info['minZoom']}..{info['maxZoom']})")
    return info
