"""The distance part of a delivery fee over real roads (Monaco's network moved onto Yerevan): the
road distance from the company's depot, asked of the project's router, not the straight line."""

from __future__ import annotations

import pytest

from appliance.dispatch.app import create_app
from appliance.dispatch.routing.engines import haversine_m
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.import_helpers import csv_bytes, post_csv, row
from tests.dispatch.orders_helpers import create_order
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C


@pytest.fixture
def app(routed_data_dir, settings):
    return create_app(settings)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def dispatcher(app):
    return make_member(app, make_company("Arev", depot=ROAD_A), "dispatcher")


def _around(points) -> list[dict[str, float]]:
    lats, lons = [p[0] for p in points], [p[1] for p in points]
    lo_lat, hi_lat, lo_lon, hi_lon = min(lats) - 0.01, max(lats) + 0.01, min(lons) - 0.01, max(lons) + 0.01
    return [
        {"lat": lo_lat, "lon": lo_lon},
        {"lat": lo_lat, "lon": hi_lon},
        {"lat": hi_lat, "lon": hi_lon},
        {"lat": hi_lat, "lon": lo_lon},
    ]


def _road_metres(app, *pins) -> list[float]:
    table = app.extensions["dispatch"].router.table([ROAD_A], list(pins))
    assert table.method == "road"
    return table.distances[0]


def test_the_per_km_part_uses_the_road_distance_from_the_depot(app, client, dispatcher) -> None:
    zone = {"name": "Roads", "polygon": _around([ROAD_A, ROAD_B, ROAD_C]), "baseFeeAmd": 300, "perKmAmd": 200}
    assert client.post("/company/fee-zones", json=zone, headers=dispatcher.headers).status_code == 201
    order = create_order(client, dispatcher, pin={"lat": ROAD_B[0], "lon": ROAD_B[1]})
    (metres,) = _road_metres(app, ROAD_B)
    assert metres > haversine_m(ROAD_A, ROAD_B)  # the roads wind: not the straight line
    assert order["deliveryFeeAmd"] == 300 + (200 * round(metres) + 500) // 1000


def test_an_import_prices_every_row_by_its_road_distance(app, client, dispatcher) -> None:
    zone = {"name": "Roads", "polygon": _around([ROAD_A, ROAD_B, ROAD_C]), "perKmAmd": 150}
    assert client.post("/company/fee-zones", json=zone, headers=dispatcher.headers).status_code == 201
    rows = [row(1, lat=ROAD_B[0], lon=ROAD_B[1]), row(2, lat=ROAD_C[0], lon=ROAD_C[1])]
    answer = post_csv(client, dispatcher, csv_bytes(rows))
    assert answer.status_code == 200 and answer.json["created"] == 2, answer.json
    fees = [
        client.get(f"/orders/{i}", headers=dispatcher.headers).json["order"]["deliveryFeeAmd"]
        for i in answer.json["orderIds"]
    ]
    expected = [(150 * round(m) + 500) // 1000 for m in _road_metres(app, ROAD_B, ROAD_C)]
    assert fees == expected and all(fee > 0 for fee in fees)


def test_an_import_of_more_rows_than_one_road_table_takes_prices_each_by_its_own_road(
    app, client, dispatcher
) -> None:
    zone = {"name": "Roads", "polygon": _around([ROAD_A, ROAD_B, ROAD_C]), "perKmAmd": 150}
    assert client.post("/company/fee-zones", json=zone, headers=dispatcher.headers).status_code == 201
    pins = [ROAD_B if n % 2 else ROAD_C for n in range(1, 131)]  # 130 rows: two tables of the depot
    rows = [row(n, lat=lat, lon=lon) for n, (lat, lon) in enumerate(pins, start=1)]
    answer = post_csv(client, dispatcher, csv_bytes(rows))
    assert answer.status_code == 200 and answer.json["created"] == 130, answer.json
    by_b, by_c = ((150 * round(m) + 500) // 1000 for m in _road_metres(app, ROAD_B, ROAD_C))
    fees = [
        o["deliveryFeeAmd"]
        for o in sorted(
            client.get("/orders?limit=200", headers=dispatcher.headers).json["orders"],
            key=lambda o: int(o["id"]),
        )
    ]
    assert fees == [by_b if n % 2 else by_c for n in range(1, 131)]
