"""static/js/map.js in a real browser (Debian's Chromium driven by Playwright, WebGL through
SwiftShader) against the app serving the session's real tiles: the map loads and draws the vector
tiles with /map/style.json, and shows the courier, the destination and the route line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polyline
import pytest

from appliance.dispatch.app import create_app
from appliance.settings import Settings
from tests import map_fixtures
from tests.conftest import serving
from tests.e2e.console_server import ARTIFACTS, BROWSER_TEST, chromium, wait_until
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST
tiled_data_dir = map_fixtures.tiled_data_dir
tiled_settings = map_fixtures.tiled_settings

ROUTE = [ROAD_A, ROAD_C, ROAD_B]
IDLE = "() => window.mapCheck && mapCheck.loaded && mapCheck.map.loaded() && mapCheck.map.areTilesLoaded()"


@pytest.fixture
def browser_page(tiled_settings: Settings) -> Iterator[tuple[Any, str, dict[str, Any]]]:
    seen: dict[str, Any] = {"tiles": [], "failed": [], "console": []}
    with serving(create_app(tiled_settings)) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 700}, device_scale_factor=1)
        page.on("console", lambda m: m.type == "error" and seen["console"].append(m.text))
        page.on("pageerror", lambda e: seen["console"].append(str(e)))

        def on_response(response: Any) -> None:
            if "/tiles/" in response.url:
                seen["tiles"].append(response.status)
            if response.status >= 400:
                seen["failed"].append(f"{response.status} {response.url}")

        page.on("response", on_response)
        yield page, url, seen


def marker_centre(page: Any, name: str) -> tuple[float, float]:
    box = page.locator(f"[data-marker='{name}']").bounding_box()
    assert box is not None, name
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def projected(page: Any, point: tuple[float, float]) -> tuple[float, float]:
    xy = page.evaluate("([lon, lat]) => mapCheck.map.project([lon, lat])", [point[1], point[0]])
    return xy["x"], xy["y"]


def test_the_map_draws_the_tiles_the_markers_and_the_route_line(browser_page) -> None:
    page, url, seen = browser_page
    encoded = polyline.encode(ROUTE, 6)
    query = f"destination={ROAD_B[0]},{ROAD_B[1]}&courier={ROAD_A[0]},{ROAD_A[1]}&route={encoded}"
    page.goto(f"{url}/static/map-check.html?{query}")
    wait_until(page, IDLE, timeout=60)  # polled: the page's CSP refuses eval

    # Vector tiles were fetched from the appliance and drawn with the style's layers.
    assert page.evaluate("mapCheck.tilesLoaded") > 0
    assert seen["tiles"] and set(seen["tiles"]) <= {200, 204}
    drawn = page.evaluate(
        "() => mapCheck.map.queryRenderedFeatures({layers: ['road-minor', 'road-major', 'building']})"
        ".map(f => f.layer.id)"
    )
    assert {"road-minor", "building"} <= set(drawn)

    # Both markers are on the page where their coordinates project.
    for name, point in (("courier", ROAD_A), ("destination", ROAD_B)):
        assert page.is_visible(f"[data-marker='{name}']")
        (mx, my), (px, py) = marker_centre(page, name), projected(page, point)
        assert abs(mx - px) < 3 and abs(my - py) < 3, name

    # The route line is the polyline decoded in JavaScript, and it is drawn.
    coordinates = page.evaluate("mapCheck.routeCoordinates")
    assert len(coordinates) == len(ROUTE)
    for (lon, lat), (want_lat, want_lon) in zip(coordinates, polyline.decode(encoded, 6), strict=True):
        assert abs(lon - want_lon) < 1e-9 and abs(lat - want_lat) < 1e-9
    assert page.evaluate("() => mapCheck.map.queryRenderedFeatures({layers: ['route']}).length") > 0

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "map-check.png"))
    assert seen["failed"] == []
    assert page.evaluate("mapCheck.errors") == []
    assert seen["console"] == []


def test_updating_the_view_moves_the_courier_and_clears_the_route(browser_page) -> None:
    page, url, _seen = browser_page
    page.goto(f"{url}/static/map-check.html?destination={ROAD_B[0]},{ROAD_B[1]}")
    wait_until(page, IDLE, timeout=60)  # polled: the page's CSP refuses eval
    assert page.locator("[data-marker='courier']").count() == 0

    view = {
        "courier": {"lat": ROAD_C[0], "lon": ROAD_C[1]},
        "destination": {"lat": ROAD_B[0], "lon": ROAD_B[1]},
        "route": polyline.encode([ROAD_C, ROAD_B], 6),
    }
    page.evaluate("(view) => mapCheck.update(view)", view)
    wait_until(page, IDLE, timeout=60)  # polled: the page's CSP refuses eval
    (mx, my), (px, py) = marker_centre(page, "courier"), projected(page, ROAD_C)
    assert abs(mx - px) < 3 and abs(my - py) < 3
    assert len(page.evaluate("mapCheck.routeCoordinates")) == 2

    page.evaluate("(view) => mapCheck.update(view)", {**view, "courier": None, "route": None})
    assert page.locator("[data-marker='courier']").count() == 0
    assert page.evaluate("mapCheck.routeCoordinates") == []


def test_the_javascript_polyline_decoder_agrees_with_the_python_one(browser_page) -> None:
    page, url, _seen = browser_page
    page.goto(f"{url}/static/map-check.html")
    points = [(40.177600, 44.512600), (-33.868820, 151.209296), (85.0, -179.999999), (0.000001, 0.0)]
    encoded = polyline.encode(points, 6)
    decoded = page.evaluate("(text) => decodePolyline(text, 6)", encoded)
    assert [(round(lat, 6), round(lon, 6)) for lon, lat in decoded] == points
    assert page.evaluate("(text) => decodePolyline(text, 5).length", polyline.encode(points, 5)) == 4
