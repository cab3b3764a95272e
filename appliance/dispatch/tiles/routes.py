"""Map tiles (/tiles/{z}/{x}/{y}.pbf from the MBTiles file), TileJSON and the map style.

A tile that the MBTiles file holds is answered as stored (gzip, so ``Content-Encoding: gzip``). A
tile inside the built area and zoom range that tilemaker did not write (nothing to draw there) is
204 No Content, which MapLibre draws as an empty tile without an error; anything else (outside the
built area or zoom range, or no tiles built) is a 404 Problem.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, jsonify, request

from appliance.common.problems import NotFound
from appliance.dispatch.runtime import runtime
from appliance.dispatch.tiles.build import lonlat_to_tile, open_mbtiles, read_metadata, tiles_path

bp = Blueprint("tiles", __name__)

ATTRIBUTION = (
    '<a href="https://openmaptiles.org/" target="_blank">© OpenMapTiles</a> '
    '<a href="https://www.openstreetmap.org/copyright" target="_blank">© OpenStreetMap contributors</a>'
)
# Before any build: Armenia, centred on Yerevan.
DEFAULT_BOUNDS = [43.4, 38.8, 46.7, 41.4]
DEFAULT_CENTER = [44.5126, 40.1776, 12]
MAX_ZOOM = 22


def _within(meta: dict[str, str], z: int, x: int, y: int) -> bool:
    """Whether XYZ tile (z, x, y) lies inside the built area and zoom range."""
    if not int(meta.get("minzoom", 0)) <= z <= int(meta.get("maxzoom", 14)):
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


@bp.route("/tiles/<int:z>/<int:x>/<int:y>.pbf", methods=["GET"])
def tile(z: int, x: int, y: int) -> Response:
    path = tiles_path(runtime().settings.data_dir)
    if not path.exists() or not (0 <= z <= MAX_ZOOM and 0 <= x < 2**z and 0 <= y < 2**z):
        raise NotFound("No such tile.")
    with open_mbtiles(path) as conn:
        row = conn.execute(
            "SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
            (z, x, 2**z - 1 - y),  # MBTiles rows are TMS: y counts from the south
        ).fetchone()
        meta = None if row else dict(conn.execute("SELECT name, value FROM metadata").fetchall())
    if row is None:
        if meta is not None and _within(meta, z, x, y):
            response = Response(status=204)
            response.headers["Cache-Control"] = "public, max-age=3600"
            return response
        raise NotFound("No such tile.")
    data = bytes(row[0])
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


def _line(layer_id: str, classes: list[str], color: str, widths: tuple[float, float]) -> dict[str, Any]:
    return {
        "id": layer_id,
        "type": "line",
        "source": "osm",
        "source-layer": "transportation",
        "filter": ["in", ["get", "class"], ["literal", classes]],
        "layout": {"line-cap": "round", "line-join": "round"},
        "paint": {
            "line-color": color,
            "line-width": ["interpolate", ["exponential", 1.5], ["zoom"], 10, widths[0], 18, widths[1]],
        },
    }


MAJOR = ["motorway", "trunk", "primary"]
MINOR = ["secondary", "tertiary", "minor", "service", "track", "raceway", "busway"]
PATHS = ["path", "pedestrian"]


def style() -> dict[str, Any]:
    """A brand-neutral MapLibre style: land, parks, water, buildings and roads; no text labels
    (the appliance ships no glyph files), so the page needs nothing beyond the tiles."""
    source = tilejson()
    return {
        "version": 8,
        "name": "appliance tracking",
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
        "zoom": 13,
        "layers": [
            {"id": "background", "type": "background", "paint": {"background-color": "#f4f1ea"}},
            {
                "id": "landuse",
                "type": "fill",
                "source": "osm",
                "source-layer": "landuse",
                "paint": {"fill-color": "#ebe6dc"},
            },
            {
                "id": "landcover",
                "type": "fill",
                "source": "osm",
                "source-layer": "landcover",
                "paint": {"fill-color": "#dcecd0", "fill-opacity": 0.7},
            },
            {
                "id": "park",
                "type": "fill",
                "source": "osm",
                "source-layer": "park",
                "paint": {"fill-color": "#d4eac7"},
            },
            {
                "id": "water",
                "type": "fill",
                "source": "osm",
                "source-layer": "water",
                "paint": {"fill-color": "#a9d3e6"},
            },
            {
                "id": "waterway",
                "type": "line",
                "source": "osm",
                "source-layer": "waterway",
                "paint": {"line-color": "#a9d3e6", "line-width": 1.5},
            },
            {
                "id": "building",
                "type": "fill",
                "source": "osm",
                "source-layer": "building",
                "minzoom": 13,
                "paint": {"fill-color": "#ddd6cf", "fill-outline-color": "#c9bfb6"},
            },
            {
                "id": "path",
                "type": "line",
                "source": "osm",
                "source-layer": "transportation",
                "minzoom": 14,
                "filter": ["in", ["get", "class"], ["literal", PATHS]],
                "paint": {"line-color": "#ffffff", "line-width": 1.2, "line-dasharray": [2, 1]},
            },
            _line("road-casing", MINOR + MAJOR, "#c5bdb1", (1.2, 22)),
            _line("road-minor", MINOR, "#ffffff", (0.6, 18)),
            _line("road-major", MAJOR, "#fbe3a4", (1.0, 20)),
            {
                "id": "rail",
                "type": "line",
                "source": "osm",
                "source-layer": "transportation",
                "filter": ["==", ["get", "class"], "rail"],
                "paint": {"line-color": "#b7b0a6", "line-width": 1, "line-dasharray": [3, 3]},
            },
            {
                "id": "boundary",
                "type": "line",
                "source": "osm",
                "source-layer": "boundary",
                "filter": ["<=", ["get", "admin_level"], 4],
                "paint": {"line-color": "#9e9cab", "line-width": 1, "line-dasharray": [3, 2]},
            },
        ],
    }


@bp.route("/map/style.json", methods=["GET"])
def map_style() -> Response:
    response = jsonify(style())
    response.headers["Cache-Control"] = "no-cache"
    return response
