"""`appliance map build`: an OpenStreetMap extract → <data_dir>/tiles.mbtiles with tilemaker.

The new file is written beside the old one and swapped in only when tilemaker succeeded. The
extract's bounds are written into the metadata from the tiles themselves (extracts without a
bbox header otherwise get 0,0,0,0)."""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from appliance.common import clock

HERE = Path(__file__).resolve().parent
TILES_FILE = "tiles.mbtiles"


class TilesBuildError(Exception):
    pass


def tiles_path(data_dir: Path) -> Path:
    return Path(data_dir) / TILES_FILE


def _tile_to_lonlat(x: float, y: float, z: int) -> tuple[float, float]:
    n = 2**z
    lon = x / n * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y / n))))
    return lon, lat


def read_metadata(path: Path) -> dict[str, str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT name, value FROM metadata").fetchall())


def _fix_bounds(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        zoom = conn.execute("SELECT MAX(zoom_level) FROM tiles").fetchone()[0]
        if zoom is None:
            raise TilesBuildError("tilemaker wrote no tiles")
        xmin, xmax, ymin, ymax = conn.execute(
            "SELECT MIN(tile_column), MAX(tile_column), MIN(tile_row), MAX(tile_row) FROM tiles"
            " WHERE zoom_level = ?",
            (zoom,),
        ).fetchone()
        # MBTiles rows are TMS (y from the south); convert to XYZ before computing latitudes.
        top, bottom = (2**zoom - 1 - ymax), (2**zoom - 1 - ymin) + 1
        west, north = _tile_to_lonlat(xmin, top, zoom)
        east, south = _tile_to_lonlat(xmax + 1, bottom, zoom)
        bounds = f"{west:.6f},{south:.6f},{east:.6f},{north:.6f}"
        center = f"{(west + east) / 2:.6f},{(south + north) / 2:.6f},{min(14, zoom)}"
        for name, value in (("bounds", bounds), ("center", center)):
            conn.execute("DELETE FROM metadata WHERE name = ?", (name,))
            conn.execute("INSERT INTO metadata (name, value) VALUES (?, ?)", (name, value))


def build(pbf: Path, data_dir: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    pbf = Path(pbf).resolve()
    if not pbf.is_file():
        raise TilesBuildError(f"{pbf}: no such file")
    tilemaker = shutil.which("tilemaker")
    if tilemaker is None:
        raise TilesBuildError("tilemaker is not installed (Debian package tilemaker)")
    target = tiles_path(data_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".tiles-{os.getpid()}.mbtiles")
    temp.unlink(missing_ok=True)
    started = time.monotonic()
    progress("tilemaker: reading the extract and writing tiles …")
    result = subprocess.run(
        [
            tilemaker,
            "--input",
            str(pbf),
            "--output",
            str(temp),
            "--config",
            str(HERE / "config.json"),
            "--process",
            str(HERE / "process.lua"),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=target.parent,
    )
    if result.returncode != 0 or not temp.exists():
        temp.unlink(missing_ok=True)
        tail = " | ".join((result.stderr or result.stdout).strip().splitlines()[-3:])
        raise TilesBuildError(f"tilemaker failed: {tail or result.returncode}")
    try:
        _fix_bounds(temp)
    except (TilesBuildError, sqlite3.Error):
        temp.unlink(missing_ok=True)
        raise
    os.replace(temp, target)
    meta = read_metadata(target)
    info = {
        "source": str(pbf.resolve()),
        "builtAt": clock.iso(clock.now()),
        "seconds": round(time.monotonic() - started, 2),
        "minZoom": int(meta.get("minzoom", 0)),
        "maxZoom": int(meta.get("maxzoom", 14)),
    }
    progress(f"map tiles ready in {info['seconds']} s (zoom {info['minZoom']}..{info['maxZoom']})")
    return info
