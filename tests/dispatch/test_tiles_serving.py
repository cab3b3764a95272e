"""/tiles/{z}/{x}/{y}.pbf, /tiles/tiles.json and /map/style.json over the session's real tiles."""

from __future__ import annotations

from pathlib import Path

from appliance.dispatch.app import create_app
from appliance.settings import Settings
from tests import map_fixtures
from tests.geo_fixtures import ROAD_A, ROAD_B
from tests.map_fixtures import stored_tiles, vector_tile_layers, xyz

tiled_data_dir = map_fixtures.tiled_data_dir
tiled_settings = map_fixtures.tiled_settings


def client_for(settings: Settings):
    app = create_app(settings)
    app.testing = True
    return app.test_client()


def test_the_tile_under_a_yerevan_street_is_a_gzipped_vector_tile_with_roads(
    tiled_settings: Settings,
) -> None:
    x, y = xyz(*ROAD_A, 14)
    response = client_for(tiled_settings).get(f"/tiles/14/{x}/{y}.pbf")
    assert response.status_code == 200
    assert response.mimetype == "application/x-protobuf"
    assert response.headers["Content-Encoding"] == "gzip"
    assert response.data[:2] == b"\x1f\x8b"
    layers = vector_tile_layers(response.data)
    assert layers["transportation"] > 0
    assert layers["building"] > 0


def test_every_stored_tile_is_served_at_its_xyz_address_with_y_flipped_from_the_tms_row(
    tiled_settings: Settings, map_tiles: Path
) -> None:
    client = client_for(tiled_settings)
    tiles = stored_tiles(map_tiles)
    assert len(tiles) > 20
    for z, x, tms_row, data in tiles:
        response = client.get(f"/tiles/{z}/{x}/{2**z - 1 - tms_row}.pbf")
        assert response.status_code == 200, (z, x, tms_row)
        assert response.data == data
    # The unflipped row is somewhere else on the planet (the southern hemisphere): not served.
    x, y = xyz(*ROAD_B, 14)
    assert client.get(f"/tiles/14/{x}/{2**14 - 1 - y}.pbf").status_code == 404


def test_a_tile_outside_the_built_area_or_zoom_range_is_a_404_problem(tiled_settings: Settings) -> None:
    client = client_for(tiled_settings)
    x, y = xyz(*ROAD_A, 14)
    for path in (
        "/tiles/14/0/0.pbf",  # the other side of the world
        f"/tiles/14/{x + 50}/{y}.pbf",  # east of the area
        f"/tiles/15/{2 * x}/{2 * y}.pbf",  # deeper than the build
        "/tiles/3/99/0.pbf",  # no such tile at that zoom
        "/tiles/40/0/0.pbf",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.mimetype == "application/problem+json"
        assert response.json["status"] == 404


def test_an_empty_tile_inside_the_built_area_is_204_no_content(
    tiled_settings: Settings, map_tiles: Path
) -> None:
    stored = {(x, 2**14 - 1 - row) for z, x, row, _ in stored_tiles(map_tiles) if z == 14}
    xs, ys = [x for x, _ in stored], [y for _, y in stored]
    holes = [
        (x, y)
        for x in range(min(xs), max(xs) + 1)
        for y in range(min(ys), max(ys) + 1)
        if (x, y) not in stored
    ]
    assert holes, "the translated Monaco extract leaves empty tiles inside its bounds"
    client = client_for(tiled_settings)
    response = client.get(f"/tiles/14/{holes[0][0]}/{holes[0][1]}.pbf")
    assert response.status_code == 204
    assert response.data == b""
    # Just beyond the outermost stored tiles it is 404 again.
    assert client.get(f"/tiles/14/{max(xs) + 1}/{min(ys)}.pbf").status_code == 404
    assert client.get(f"/tiles/14/{min(xs)}/{max(ys) + 1}.pbf").status_code == 404
    assert client.get(f"/tiles/14/{min(xs) - 1}/{min(ys)}.pbf").status_code == 404
    assert client.get(f"/tiles/14/{min(xs)}/{min(ys) - 1}.pbf").status_code == 404


def test_without_built_tiles_every_tile_is_a_404_problem(settings: Settings) -> None:
    response = client_for(settings).get("/tiles/0/0/0.pbf")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_tilejson_describes_the_built_area_with_a_tile_url_under_the_public_url(
    tiled_settings: Settings,
) -> None:
    client = client_for(tiled_settings.replace(public_url="https://dispatch.example.am/"))
    document = client.get("/tiles/tiles.json").json
    assert document["tilejson"] == "3.0.0"
    assert document["tiles"] == ["https://dispatch.example.am/tiles/{z}/{x}/{y}.pbf"]
    assert (document["minzoom"], document["maxzoom"]) == (0, 14)
    west, south, east, north = document["bounds"]
    for lat, lon in (ROAD_A, ROAD_B):
        assert west < lon < east and south < lat < north
    lon, lat, _zoom = document["center"]
    assert west < lon < east and south < lat < north
    assert {layer["id"] for layer in document["vector_layers"]} >= {"transportation", "building", "water"}
    assert "OpenStreetMap" in document["attribution"]


def test_without_a_public_url_the_tile_url_follows_the_address_the_browser_used(
    tiled_settings: Settings,
) -> None:
    document = client_for(tiled_settings).get("/tiles/tiles.json", base_url="http://10.0.0.7:8080").json
    assert document["tiles"] == ["http://10.0.0.7:8080/tiles/{z}/{x}/{y}.pbf"]


def test_a_tile_url_setting_points_tilejson_and_the_style_at_the_external_server(
    tiled_settings: Settings,
) -> None:
    template = "https://tiles.example.am/data/armenia/{z}/{x}/{y}.pbf"
    client = client_for(tiled_settings.replace(tiles_url=template))
    assert client.get("/tiles/tiles.json").json["tiles"] == [template]
    assert client.get("/map/style.json").json["sources"]["osm"]["tiles"] == [template]


def test_the_style_is_a_maplibre_style_over_the_tiles_layers_without_glyphs(
    tiled_settings: Settings,
) -> None:
    client = client_for(tiled_settings)
    tilejson = client.get("/tiles/tiles.json").json
    response = client.get("/map/style.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    style = response.json
    assert style["version"] == 8
    source = style["sources"]["osm"]
    assert source["type"] == "vector" and source["tiles"] == tilejson["tiles"]
    assert (source["minzoom"], source["maxzoom"]) == (0, 14)
    assert source["bounds"] == tilejson["bounds"]
    ids = [layer["id"] for layer in style["layers"]]
    assert len(ids) == len(set(ids))
    assert {"background", "water", "building", "road-minor", "road-major"} <= set(ids)
    known = {layer["id"] for layer in tilejson["vector_layers"]}
    for layer in style["layers"]:
        assert layer["type"] in {"background", "fill", "line"}  # no text: no glyphs needed
        if layer["type"] != "background":
            assert layer["source"] == "osm" and layer["source-layer"] in known
    assert "glyphs" not in style
