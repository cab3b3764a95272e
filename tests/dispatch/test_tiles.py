"""Map tiles built with the real tilemaker and served from MBTiles."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

from click.testing import CliRunner

from appliance.cli import cli
from appliance.dispatch.app import create_app
from tests.geo_fixtures import ROAD_A


def _xyz(lat: float, lon: float, z: int) -> tuple[int, int]:
    n = 2**z
    x = int((lon + 180) / 360 * n)
    y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
    return x, y


def test_map_build_reports_the_contracts_json_and_health_passes_after_it(
    tmp_path: Path, yerevan_pbf, map_tiles
) -> None:
    result = CliRunner().invoke(
        cli, ["map", "build", "--pbf", str(yerevan_pbf), "--data-dir", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)["tiles"]
    assert set(info) == {"source", "builtAt", "seconds", "minZoom", "maxZoom"}
    assert info["minZoom"] == 0 and info["maxZoom"] == 14
    from appliance.settings import load_settings

    app = create_app(load_settings({"data_dir": str(tmp_path)}, environ={}))
    with app.app_context():
        _ok, checks = app.extensions["dispatch"].health.run()
    assert checks["tiles"]["status"] == "pass"


def test_a_bad_extract_fails_with_one_line_and_keeps_no_file(tmp_path: Path, map_tiles) -> None:
    bad = tmp_path / "bad.osm.pbf"
    bad.write_bytes(b"nope")
    result = CliRunner().invoke(cli, ["map", "build", "--pbf", str(bad), "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert not (tmp_path / "tiles.mbtiles").exists()


def test_the_tile_under_yerevan_is_a_real_vector_tile_and_y_is_flipped(mapped_data_dir, settings) -> None:
    client = create_app(settings).test_client()
    x, y = _xyz(*ROAD_A, 14)
    response = client.get(f"/tiles/14/{x}/{y}.pbf")
    assert response.status_code == 200
    assert response.mimetype == "application/x-protobuf"
    raw = response.data
    body = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    assert b"transportation" in body  # the layer name is in the protobuf
    flipped = 2**14 - 1 - y
    assert client.get(f"/tiles/14/{x}/{flipped}.pbf").status_code == 404


def test_tiles_outside_the_extract_are_404_problems(mapped_data_dir, settings) -> None:
    client = create_app(settings).test_client()
    assert client.get("/tiles/14/0/0.pbf").status_code == 404
    assert client.get("/tiles/3/99/0.pbf").status_code == 404


def test_tilejson_and_style_describe_the_built_area(mapped_data_dir, settings) -> None:
    client = create_app(settings).test_client()
    tilejson = client.get("/tiles/tiles.json").json
    west, south, east, north = tilejson["bounds"]
    assert west < ROAD_A[1] < east and south < ROAD_A[0] < north
    assert tilejson["tiles"][0].endswith("/tiles/{z}/{x}/{y}.pbf")
    style = client.get("/map/style.json").json
    assert style["version"] == 8 and style["sources"]["osm"]["tiles"] == tilejson["tiles"]
    assert {layer["id"] for layer in style["layers"]} >= {"background", "road", "water"}


def test_health_reports_tiles_not_built_before_a_build(dispatch_client) -> None:
    assert dispatch_client.get("/healthz").json["checks"]["tiles"]["status"] == "not_built"
