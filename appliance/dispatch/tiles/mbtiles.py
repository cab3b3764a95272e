"""Every read of the MBTiles file (<data_dir>/tiles.mbtiles): its metadata, one tile, the tile the
health probe reads, and the XYZ tile arithmetic. /tiles, the TileJSON and the tiles probe all read
through here; the build (build.py) writes the file."""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

TILES_FILE = "tiles.mbtiles"
DEFAULT_MAX_ZOOM = 14


def tiles_path(data_dir: Path) -> Path:
    return Path(data_dir) / TILES_FILE


@contextlib.contextmanager
def open_mbtiles(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to an MBTiles file, closed on exit."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def _metadata(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT name, value FROM metadata").fetchall())


def read_metadata(path: Path) -> dict[str, str]:
    with open_mbtiles(path) as conn:
        return _metadata(conn)


# -- tile arithmetic -----------------------------------------------------------------------------


def tile_to_lonlat(x: float, y: float, z: int) -> tuple[float, float]:
    """The north-west corner of XYZ tile (x, y) at zoom z (fractions allowed)."""
    n = 2**z
    lon = x / n * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * y / n))))
    return lon, lat


def lonlat_to_tile(lon: float, lat: float, z: int) -> tuple[int, int]:
    """The XYZ tile (x, y) holding a point at zoom z."""
    n = 2**z
    x = int((lon + 180.0) / 360.0 * n)
    y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
    return min(max(x, 0), n - 1), min(max(y, 0), n - 1)


def flip_y(z: int, y: int) -> int:
    """XYZ rows count from the north, MBTiles (TMS) rows from the south; the map is its own inverse."""
    return 2**z - 1 - y


def centre(meta: dict[str, str]) -> tuple[float, float] | None:
    """(lon, lat) of the built area's centre, when the metadata names one."""
    try:
        lon, lat = (float(v) for v in meta["center"].split(",")[:2])
    except (KeyError, ValueError):
        return None
    return lon, lat


def within(meta: dict[str, str], z: int, x: int, y: int) -> bool:
    """Whether XYZ tile (z, x, y) lies inside the built area and zoom range."""
    if not int(meta.get("minzoom", 0)) <= z <= int(meta.get("maxzoom", DEFAULT_MAX_ZOOM)):
        return False
    try:
        west, south, east, north = (float(v) for v in meta["bounds"].split(","))
    except (KeyError, ValueError):
        return False
    # The bounds are tile edges rounded to 6 decimals: nudge every edge inside so that the
    # neighbouring tiles stay out.
    left, top = lonlat_to_tile(west + 1e-6, north - 1e-6, z)
    right, bottom = lonlat_to_tile(east - 1e-6, south + 1e-6, z)
    return left <= x <= right and top <= y <= bottom


# -- tiles -----------------------------------------------------------------------------------------

_TILE = "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles"


def read_tile(path: Path, z: int, x: int, y: int) -> tuple[bytes | None, dict[str, str]]:
    """The stored bytes of XYZ tile (z, x, y), as stored (often gzip); with the metadata when the
    file does not hold that tile (to tell an empty tile from one outside the map)."""
    with open_mbtiles(path) as conn:
        row = conn.execute(
            "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
            (z, x, flip_y(z, y)),
        ).fetchone()
        if row is not None:
            return bytes(row[0]), {}
        return None, _metadata(conn)


def probe_tile(
    path: Path, fallback_centre: tuple[float, float]
) -> tuple[tuple[int, int, int, bytes] | None, dict[str, str]]:
    """The most detailed tile at the centre of the built area (else at ``fallback_centre``), or
    the most detailed tile of all when that one is empty: (z, x, y, data) in XYZ, and the
    metadata."""
    with open_mbtiles(path) as conn:
        meta = _metadata(conn)
        z = int(meta.get("maxzoom", DEFAULT_MAX_ZOOM))
        lon, lat = centre(meta) or fallback_centre
        x, y = lonlat_to_tile(lon, lat, z)
        row = (
            conn.execute(
                f"{_TILE} WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?", (z, x, flip_y(z, y))
            ).fetchone()
            or conn.execute(f"{_TILE} ORDER BY zoom_level DESC LIMIT 1").fetchone()
        )
    if row is None:
        return None, meta
    z, x, tms_y, data = row
    return (z, x, flip_y(z, tms_y), bytes(data or b"")), meta
