"""Map tiles (/tiles/{z}/{x}/{y}.pbf from the MBTiles file), TileJSON and the map style.

A tile that the MBTiles file holds is answered as stored (gzip, so ``Content-Encoding: gzip``). A
tile inside the built area and zoom range that tilemaker did not write (nothing to draw there) is
204 No Content, which MapLibre draws as an empty tile without an error; anything else (outside the
built area or zoom range, or no tiles built) is a 404 Problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, request

from appliance.common.problems import NotFound
from appliance.dispatch.runtime import runtime
from appliance.dispatch.tiles.mbtiles import read_metadata, read_tile, tiles_path, within

bp = Blueprint("tiles", __name__)

ATTRIBUTION = (
    '<a href="https://openmaptiles.org/" target="_blank">© OpenMapTiles</a> '
    '<a href="https://www.openstreetmap.org/copyright" target="_blank">© OpenStreetMap contributors</a>'
)
# Before any build: Armenia, centred on Yerevan.
DEFAULT_BOUNDS = [43.4, 38.8, 46.7, 41.4]
DEFAULT_CENTER = [44.5126, 40.1776, 12]
MAX_ZOOM = 22
# The layers of the map, edited as data (every source of a layer is "osm", filled in by style()).
STYLE = Path(__file__).resolve().parent / "style.json"


@bp.route("/tiles/<int:z>/<int:x>/<int:y>.pbf", methods=["GET"])
def tile(z: int, x: int, y: int) -> Response:
    path = tiles_path(runtime().settings.data_dir)
    if not path.exists() or not (0 <= z <= MAX_ZOOM and 0 <= x < 2**z and 0 <= y < 2**z):
        raise NotFound("No such tile.")
    data, meta = read_tile(path, z, x, y)
    if data is None:
        if meta and within(meta, z, x, y):
            response = Response(status=204)
            response.headers["Cache-Control"] = "public, max-age=3600"
            return response
        raise NotFound("No such tile.")
    response = Response(data, mimetype="application/x-protobuf")
    if data[:2] == b"\x1f\x8b":
        response.headers["Content-Encoding"] = "gzip"
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def _floats(text: str | None, default: list[float]) -> list[float]:
    try:
        values = [float(v) for v in (text or "").split(",")]
    except ValueError:
        return default
    return values if len(values) == len(default) else default


def tilejson() -> dict[str, Any]:
    """The TileJSON of the configured source: the external server, or this appliance's tiles."""
    settings = runtime().settings
    path = tiles_path(settings.data_dir)
    meta = read_metadata(path) if path.exists() else {}
    base = (settings.public_url or request.host_url).rstrip("/")
    url = settings.tiles_url or f"{base}/tiles/{{z}}/{{x}}/{{y}}.pbf"
    document: dict[str, Any] = {
        "tilejson": "3.0.0",
        "name": meta.get("name", "tracking map"),
        "scheme": "xyz",
        "tiles": [url],
        "minzoom": int(meta.get("minzoom", 0)),
        "maxzoom": int(meta.get("maxzoom", 14)),
        "bounds": _floats(meta.get("bounds"), DEFAULT_BOUNDS),
        "center": _floats(meta.get("center"), DEFAULT_CENTER),
        "attribution": ATTRIBUTION,
    }
    try:
        document["vector_layers"] = json.loads(meta.get("json", "{}")).get("vector_layers", [])
    except ValueError:
        document["vector_layers"] = []
    if settings.tiles_url:
        # An external server's own extent is unknown here: do not clip the map to the local build.
        document["bounds"] = [-180.0, -85.0511, 180.0, 85.0511]
    return document


@bp.route("/tiles/tiles.json", methods=["GET"])
def tiles_json() -> Response:
    response = jsonify(tilejson())
    response.headers["Cache-Control"] = "no-cache"
    return response


def style() -> dict[str, Any]:
    """The map style of style.json (a brand-neutral MapLibre style: land, parks, water, buildings
    and roads; no text labels, as the appliance ships no glyph files) on the configured tiles."""
    source = tilejson()
    return {
        **json.loads(STYLE.read_text()),
        "sources": {
            "osm": {
                "type": "vector",
                "tiles": source["tiles"],
                "minzoom": source["minzoom"],
                "maxzoom": source["maxzoom"],
                "bounds": source["bounds"],
                "attribution": source["attribution"],
            }
        },
        "center": source["center"][:2],
    }


@bp.route("/map/style.json", methods=["GET"])
def map_style() -> Response:
    response = jsonify(style())
    response.headers["Cache-Control"] = "no-cache"
    return response
