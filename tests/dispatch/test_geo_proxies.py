"""The geo proxies over real roads: validated inputs, OSRM-like answers, the fallback marked."""

from __future__ import annotations

import polyline
import pytest

from appliance.dispatch.app import create_app
from tests.dispatch.factory import make_company, make_member
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C


def _pt(point: tuple[float, float]) -> dict[str, float]:
    return {"lat": point[0], "lon": point[1]}


@pytest.fixture
def app(routed_data_dir, settings):
    return create_app(settings)


@pytest.fixture
def dispatcher(app):
    return make_member(app, make_company(), "dispatcher")


def test_a_route_follows_the_roads_and_says_so(app, dispatcher) -> None:
    response = app.test_client().post(
        "/geo/route",
        json={"coordinates": [_pt(ROAD_A), _pt(ROAD_C), _pt(ROAD_B)]},
        headers=dispatcher.headers,
    )
    assert response.status_code == 200
    body = response.json
    assert body["code"] == "Ok" and body["method"] == "road"
    route = body["routes"][0]
    assert len(route["legs"]) == 2
    assert route["duration"] == pytest.approx(sum(leg["duration"] for leg in route["legs"]), abs=0.5)
    assert len(polyline.decode(route["geometry"], 6)) > 2


def test_a_courier_may_use_the_proxies_too(app) -> None:
    courier = make_member(app, make_company(), "courier")
    response = app.test_client().post(
        "/geo/matrix",
        json={"sources": [_pt(ROAD_A)], "destinations": [_pt(ROAD_B), _pt(ROAD_C)]},
        headers=courier.headers,
    )
    assert response.status_code == 200
    assert len(response.json["durations"][0]) == 2


def test_the_matrix_falls_back_to_straight_lines_when_the_engine_stops(app, dispatcher) -> None:
    app.extensions["dispatch"].router.engine.stop()
    response = app.test_client().post(
        "/geo/matrix",
        json={"sources": [_pt(ROAD_A)], "destinations": [_pt(ROAD_B)]},
        headers=dispatcher.headers,
    )
    assert response.status_code == 200
    assert response.json["method"] == "straight_line"


def test_optimize_orders_the_stops_and_reports_their_arrivals(app, dispatcher) -> None:
    stops = [ROAD_B, ROAD_C, ROAD_A]
    response = app.test_client().post(
        "/geo/optimize",
        json={"start": _pt(ROAD_A), "stops": [_pt(p) for p in stops], "serviceMinutes": 2},
        headers=dispatcher.headers,
    )
    assert response.status_code == 200
    waypoints = response.json["waypoints"]
    assert sorted(w["stopIndex"] for w in waypoints) == [0, 1, 2]
    assert waypoints[0]["stopIndex"] == 2  # the stop at the start comes first
    arrivals = [w["arrivalSeconds"] for w in waypoints]
    assert arrivals == sorted(arrivals)


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/geo/route", {"coordinates": [{"lat": 40.18, "lon": 44.51}, {"lat": 48.85, "lon": 2.35}]}, 422),
        # Too few or too many points (an item count), like a point outside the area: 422.
        ("/geo/route", {"coordinates": [{"lat": 40.18, "lon": 44.51}]}, 422),
        ("/geo/route", {"coordinates": [{"lat": 40.18, "lon": 44.51}] * 26}, 422),
        ("/geo/route", {"coordinates": [{"lat": "40.18", "lon": 44.51}] * 2}, 400),
        ("/geo/matrix", {"sources": [], "destinations": [{"lat": 40.18, "lon": 44.51}]}, 422),
        (
            "/geo/matrix",
            {"sources": [{"lat": 40.18, "lon": 44.51}] * 101, "destinations": [{"lat": 40.18, "lon": 44.51}]},
            422,
        ),
        (
            "/geo/optimize",
            {"start": {"lat": 38.0, "lon": 44.5}, "stops": [{"lat": 40.18, "lon": 44.51}]},
            422,
        ),
        (
            "/geo/optimize",
            {"start": {"lat": 40.18, "lon": 44.5}, "stops": [{"lat": 40.18, "lon": 44.51}] * 51},
            422,
        ),
    ],
)
def test_bad_input_is_refused_with_a_problem(app, dispatcher, path, body, status) -> None:
    response = app.test_client().post(path, json=body, headers=dispatcher.headers)
    assert response.status_code == status
    assert response.json["status"] == status


def test_the_proxies_need_a_signed_in_member(app) -> None:
    response = app.test_client().post("/geo/route", json={"coordinates": [_pt(ROAD_A), _pt(ROAD_B)]})
    assert response.status_code == 401
