"""Map tile helpers for tests: a data directory holding the session's real tiles (built once with
tilemaker by the ``map_tiles`` fixture of tests/conftest.py), and a small reader of the Mapbox
Vector Tile protobuf so that tests check the layers and features a tile really holds.

A test module uses the fixtures by naming them at module level:
``tiled_data_dir = map_fixtures.tiled_data_dir`` (and likewise ``tiled_settings``).
"""

from __future__ import annotations

import gzip
import math
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from appliance.settings import Settings, load_settings


@pytest.fixture
def tiled_data_dir(data_dir: Path, map_tiles: Path) -> Path:
    """The per-test data directory with the session's map tiles in place (no road data)."""
    (data_dir / "tiles.mbtiles").symlink_to(map_tiles)
    return data_dir


@pytest.fixture
def tiled_settings(tiled_data_dir: Path) -> Settings:
    return load_settings({"data_dir": str(tiled_data_dir)}, environ={})


def xyz(lat: float, lon: float, z: int) -> tuple[int, int]:
    """The XYZ (Google/OSM) tile holding a point, computed independently of the application."""
    n = 2**z
    x = int((lon + 180) / 360 * n)
    y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
    return x, y


def stored_tiles(mbtiles: Path) -> list[tuple[int, int, int, bytes]]:
    """Every (zoom, column, TMS row, data) of an MBTiles file."""
    with closing(sqlite3.connect(mbtiles)) as conn:
        rows = conn.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles").fetchall()
    return [(z, x, row, bytes(data)) for z, x, row, data in rows]


def metadata(mbtiles: Path) -> dict[str, str]:
    with closing(sqlite3.connect(mbtiles)) as conn:
        return dict(conn.execute("SELECT name, value FROM metadata").fetchall())


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """The (field number, wire type, value) of a protobuf message, in order."""
    fields: list[tuple[int, int, bytes | int]] = []
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            fields.append((number, wire, value))
        elif wire == 2:
            length, at = _varint(data, at)
            fields.append((number, wire, data[at : at + length]))
            at += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            fields.append((number, wire, data[at : at + size]))
            at += size
        else:
            raise ValueError(f"unexpected wire type {wire}")
    if at != len(data):
        raise ValueError("truncated protobuf")
    return fields


def vector_tile_layers(raw: bytes) -> dict[str, int]:
    """Layer name → number of features of a (gzipped or plain) Mapbox Vector Tile.

    Tile.layers is field 3; Layer.name is field 1, Layer.features field 2, Layer.version field 15.
    """
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    layers: dict[str, int] = {}
    for number, _wire, value in _fields(data):
        assert number == 3 and isinstance(value, bytes), "a vector tile holds only layers"
        layer = _fields(value)
        name = next(v for n, _w, v in layer if n == 1)
        assert isinstance(name, bytes)
        assert any(n == 15 and v == 2 for n, _w, v in layer), "layer version 2"
        layers[name.decode()] = sum(1 for n, _w, _v in layer if n == 2)
    return layers
