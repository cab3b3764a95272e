"""Map tiles (/tiles/{z}/{x}/{y}.pbf from the MBTiles file), TileJSON and the map style."""

from __future__ import annotations

import sqlite3
from typing import Any

from flask import Blueprint, Response, jsonify

from appliance.common.problems import NotFound
from appliance.dispatch.runtime import runtime
from appliance.dispatch.tiles.build import read_metadata, tiles_path

bp = Blueprint("tiles", __name__)


def _tile(z: int, x: int, y: int) -> bytes | None:
    path = tiles_path(runtime().settings.data_dir)
    if not path.exists() or not (0 <= z <= 22 and 0 <= x < 2**z and 0 <= y < 2**z):
        return None
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        row = conn.execute(
            "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
            (z, x, 2**z - 1 - y),  # MBTiles rows are TMS
        ).fetchone()
    return bytes(row[0]) if row else None


@bp.route("/tiles/<int:z>/<int:x>/<int:y>.pbf", methods=["GET"])
def tile(z: int, x: int, y: int) -> Response:
    data = _tile(z, x, y)
    if data is None:
        raise NotFound("No such tile.")
    response = Response(data, mimetype="application/x-protobuf")
    if data[:2] == b"\x1f\x8b":
        response.headers["Content-Encoding"] = "gzip"
    response.headers["Cache-Control"] = "public, max-age=86400"
    return response


def tilejson() -> dict[str, Any]:
    rt = runtime()
    settings = rt.settings
    path = tiles_path(settings.data_dir)
    meta = read_metadata(path) if path.exists() else {}
    url = settings.tiles_url or f"{settings.dispatch_public_url}/tiles/{{z}}/{{x}}/{{y}}.pbf"
    bounds = [float(v) for v in meta.get("bounds", "43.4,38.8,46.7,41.4").split(",")]
    center = [float(v) for v in meta.get("center", "44.5126,40.1776,12").split(",")]
    return {
        "tilejson": "3.0.0",
        "name": meta.get("name", "tracking map"),
        "tiles": [url],
        "minzoom": int(meta.get("minzoom", 0)),
        "maxzoom": int(meta.get("maxzoom", 14)),
        "bounds": bounds,
        "center": center,
        "attribution": "© OpenStreetMap contributors",
    }


@bp.route("/tiles/tiles.json", methods=["GET"])
def tiles_json() -> Response:
    return jsonify(tilejson())


def style() -> dict[str, Any]:
    source = tilejson()
    source_def = {
        "type": "vector",
        "tiles": source["tiles"],
        "minzoom": source["minzoom"],
        "maxzoom": source["maxzoom"],
        "attribution": source["attribution"],
    }
    return {
        "version": 8,
        "name": "appliance tracking",
        "sources": {"osm": source_def},
        "center": source["center"][:2],
        "zoom": 13,
        "layers": [
            {"id": "background", "type": "background", "paint": {"background-color": "#f2efe9"}},
            {
                "id": "landuse",
                "type": "fill",
                "source": "osm",
                "source-layer": "landuse",
                "paint": {"fill-color": "#e6e1d7"},
            },
            {
                "id": "park",
                "type": "fill",
                "source": "osm",
                "source-layer": "park",
                "paint": {"fill-color": "#d6ecc9"},
            },
            {
                "id": "water",
                "type": "fill",
                "source": "osm",
                "source-layer": "water",
                "paint": {"fill-color": "#aad3df"},
            },
            {
                "id": "building",
                "type": "fill",
                "source": "osm",
                "source-layer": "building",
                "minzoom": 13,
                "paint": {"fill-color": "#d9d0c9", "fill-outline-color": "#c8bcb3"},
            },
            {
                "id": "road-casing",
                "type": "line",
                "source": "osm",
                "source-layer": "transportation",
                "paint": {
                    "line-color": "#c8c2b8",
                    "line-width": ["interpolate", ["linear"], ["zoom"], 10, 1, 16, 9],
                },
            },
            {
                "id": "road",
                "type": "line",
                "source": "osm",
                "source-layer": "transportation",
                "paint": {
                    "line-color": "#ffffff",
                    "line-width": ["interpolate", ["linear"], ["zoom"], 10, 0.5, 16, 7],
                },
            },
        ],
    }


@bp.route("/map/style.json", methods=["GET"])
def map_style() -> Response:
    return jsonify(style())
