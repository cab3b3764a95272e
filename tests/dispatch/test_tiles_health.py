"""Health's "tiles" check reads a real tile from whichever source is configured."""

from __future__ import annotations

from appliance.dispatch.app import create_app
from appliance.settings import Settings
from tests import map_fixtures
from tests.conftest import serving

tiled_data_dir = map_fixtures.tiled_data_dir
tiled_settings = map_fixtures.tiled_settings


def tiles_check(settings: Settings) -> dict:
    app = create_app(settings)
    app.testing = True
    return app.test_client().get("/healthz").json["checks"]["tiles"]


def test_health_reports_tiles_not_built_before_a_build(settings: Settings) -> None:
    check = tiles_check(settings)
    assert check["status"] == "not_built"
    assert "appliance map build" in check["detail"]


def test_health_passes_after_a_build_by_reading_the_most_detailed_tile_at_the_centre(
    tiled_settings: Settings,
) -> None:
    check = tiles_check(tiled_settings)
    assert check["status"] == "pass"
    assert check["source"] == "mbtiles"
    assert check["tile"].startswith("14/")
    assert check["builtAt"]


def test_health_reads_a_real_tile_inside_the_built_area_from_a_configured_tile_server(
    tiled_settings: Settings,
) -> None:
    with serving(create_app(tiled_settings)) as server:
        check = tiles_check(tiled_settings.replace(tiles_url=f"{server}/tiles/{{z}}/{{x}}/{{y}}.pbf"))
    assert check["status"] == "pass", check
    assert check["source"] == "url"
    assert check["tile"].startswith("12/")


def test_health_fails_when_the_tile_server_has_no_tile_there(tiled_settings: Settings) -> None:
    with serving(create_app(tiled_settings)) as server:
        check = tiles_check(tiled_settings.replace(tiles_url=f"{server}/nowhere/{{z}}/{{x}}/{{y}}.pbf"))
    assert check["status"] == "fail"
    assert "answered 404" in check["detail"]


def test_health_fails_when_the_tile_server_cannot_be_reached(settings: Settings) -> None:
    from tests.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/tiles/{{z}}/{{x}}/{{y}}.pbf"
    check = tiles_check(settings.replace(tiles_url=url))
    assert check["status"] == "fail"
    assert "ConnectionError" in check["detail"]
