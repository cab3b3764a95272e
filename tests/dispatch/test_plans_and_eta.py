"""Plans and arrival estimates over real roads (Monaco's network moved onto Yerevan)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Assignment, Order
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import courier_status, ready_order
from tests.geo_fixtures import OFFSET_LAT, OFFSET_LON, ROAD_A, ROAD_B, ROAD_C

MONACO_POINTS = [
    (43.7311, 7.4197),
    (43.7384, 7.4246),
    (43.7247, 7.4148),
    (43.7402, 7.4270),
    (43.7336, 7.4165),
]
PINS = [(lat + OFFSET_LAT, lon + OFFSET_LON) for lat, lon in MONACO_POINTS] + [ROAD_B, ROAD_C]


@pytest.fixture
def app(routed_data_dir, settings):
    return create_app(settings.replace(solver_time_limit_seconds=0.5))


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def company():
    return make_company("Arev", depot=ROAD_A)


@pytest.fixture
def dispatcher(app, company):
    return make_member(app, company, "dispatcher")


@pytest.fixture
def couriers(app, client, company):
    members = [make_member(app, company, "courier") for _ in range(2)]
    for member in members:  # suggestions plan for couriers on shift by default
        assert client.post("/courier/shift/start", headers=member.headers).status_code == 201
    return members


def _orders(client, dispatcher, count: int) -> list[dict]:
    return [ready_order(client, dispatcher, pin={"lat": lat, "lon": lon}) for lat, lon in PINS[:count]]


def test_suggest_plans_every_ready_order_on_roads_and_writes_nothing(client, dispatcher, couriers) -> None:
    orders = _orders(client, dispatcher, 6)
    response = client.post("/plans/suggest", json={"capacity": 4}, headers=dispatcher.headers)
    assert response.status_code == 200
    body = response.json
    assert body["suggested"] is True and body["unassigned"] == [] and body["method"] == "road"
    planned = [s["orderId"] for r in body["routes"] for s in r["stops"]]
    assert sorted(planned) == sorted(o["id"] for o in orders)
    assert all(len(r["stops"]) <= 4 for r in body["routes"])
    assert all(r["start"]["source"] == "depot" for r in body["routes"])
    for route in body["routes"]:
        etas = [s["etaSeconds"] for s in route["stops"]]
        assert etas == sorted(etas)
    assert Assignment.select().count() == 0
    assert {o.status for o in Order.select()} == {"ready"}


def test_orders_that_do_not_fit_are_listed_unassigned(client, dispatcher, couriers) -> None:
    _orders(client, dispatcher, 5)
    body = client.post(
        "/plans/suggest",
        json={"capacity": 1, "courierIds": [couriers[0].courier.id]},
        headers=dispatcher.headers,
    ).json
    assert sum(len(r["stops"]) for r in body["routes"]) == 1
    assert len(body["unassigned"]) == 4


def test_suggest_errors(app, client, dispatcher, couriers) -> None:
    assert client.post("/plans/suggest", json={}, headers=dispatcher.headers).status_code == 422
    _orders(client, dispatcher, 1)
    assert (
        client.post("/plans/suggest", json={"orderIds": [999999]}, headers=dispatcher.headers).status_code
        == 404
    )
    stranger = make_member(app, make_company("Other"), "courier")
    assert (
        client.post(
            "/plans/suggest", json={"courierIds": [stranger.courier.id]}, headers=dispatcher.headers
        ).status_code
        == 404
    )
    # A number outside its own range is invalid input, 400 (docs/errors.md); nothing to plan is 422.
    assert client.post("/plans/suggest", json={"capacity": 0}, headers=dispatcher.headers).status_code == 400


def test_recompute_keeps_the_given_sequence_and_times_it_on_roads(client, dispatcher, couriers) -> None:
    orders = _orders(client, dispatcher, 3)
    plan = {
        "routes": [
            {"courierId": str(couriers[0].courier.id), "stops": [{"orderId": o["id"]} for o in orders]}
        ]
    }
    body = client.post("/plans/recompute", json=plan, headers=dispatcher.headers).json
    assert body["method"] == "road"
    route = body["routes"][0]
    assert [s["orderId"] for s in route["stops"]] == [o["id"] for o in orders]
    etas = [s["etaSeconds"] for s in route["stops"]]
    assert etas == sorted(etas) and route["durationSeconds"] >= etas[-1]
    reversed_plan = {
        "routes": [{"courierId": plan["routes"][0]["courierId"], "stops": plan["routes"][0]["stops"][::-1]}]
    }
    assert [
        s["orderId"]
        for s in client.post("/plans/recompute", json=reversed_plan, headers=dispatcher.headers).json[
            "routes"
        ][0]["stops"]
    ] == [o["id"] for o in orders[::-1]]


def test_recompute_falls_back_to_straight_lines_when_the_engine_stops(
    app, client, dispatcher, couriers
) -> None:
    orders = _orders(client, dispatcher, 2)
    app.extensions["dispatch"].router.engine.stop()
    plan = {
        "routes": [
            {"courierId": str(couriers[0].courier.id), "stops": [{"orderId": o["id"]} for o in orders]}
        ]
    }
    assert (
        client.post("/plans/recompute", json=plan, headers=dispatcher.headers).json["method"]
        == "straight_line"
    )


@pytest.mark.parametrize(
    ("mutate", "status"),
    [
        (lambda p: p["routes"][0]["stops"].append(p["routes"][0]["stops"][0]), 422),
        (lambda p: p["routes"][0]["stops"].append({"orderId": "999999"}), 404),
        (lambda p: p["routes"][0].update(courierId="999999"), 404),
        (lambda p: p["routes"].extend([{"courierId": p["routes"][0]["courierId"], "stops": []}] * 20), 422),
        (lambda p: p["routes"][0].update(stops=[{"orderId": "1"}] * 201), 422),
    ],
)
def test_recompute_refuses_bad_plans(client, dispatcher, couriers, mutate, status) -> None:
    orders = _orders(client, dispatcher, 2)
    plan = {
        "routes": [
            {"courierId": str(couriers[0].courier.id), "stops": [{"orderId": o["id"]} for o in orders]}
        ]
    }
    mutate(plan)
    assert client.post("/plans/recompute", json=plan, headers=dispatcher.headers).status_code == status


def test_move_stop_moves_one_order_and_retimes_every_lane(client, dispatcher, couriers) -> None:
    orders = _orders(client, dispatcher, 3)
    first, second = (str(c.courier.id) for c in couriers)
    plan = {
        "routes": [
            {"courierId": first, "stops": [{"orderId": o["id"]} for o in orders]},
            {"courierId": second, "stops": []},
        ]
    }
    body = client.post(
        "/plans/move-stop",
        json={"plan": plan, "orderId": orders[1]["id"], "toCourierId": second},
        headers=dispatcher.headers,
    ).json
    lanes = {r["courierId"]: [s["orderId"] for s in r["stops"]] for r in body["routes"]}
    assert lanes == {first: [orders[0]["id"], orders[2]["id"]], second: [orders[1]["id"]]}
    front = client.post(
        "/plans/move-stop",
        json={"plan": plan, "orderId": orders[2]["id"], "toCourierId": first, "toIndex": 0},
        headers=dispatcher.headers,
    ).json
    assert front["routes"][0]["stops"][0]["orderId"] == orders[2]["id"]
    missing = client.post(
        "/plans/move-stop",
        json={"plan": plan, "orderId": "424242", "toCourierId": first},
        headers=dispatcher.headers,
    )
    assert missing.status_code == 422


def test_apply_assigns_every_stop_in_sequence_or_nothing(client, dispatcher, couriers) -> None:
    orders = _orders(client, dispatcher, 3)
    courier = couriers[0].courier.id
    plan = {
        "routes": [
            {
                "courierId": courier,
                "stops": [{"orderId": int(o["id"]), "sequence": i + 1} for i, o in enumerate(orders)],
            }
        ]
    }
    stale = client.post(
        f"/orders/{orders[2]['id']}/status", json={"status": "draft"}, headers=dispatcher.headers
    )
    assert stale.status_code == 200
    assert client.post("/plans/apply", json=plan, headers=dispatcher.headers).status_code == 409
    assert Assignment.select().count() == 0
    client.post(f"/orders/{orders[2]['id']}/status", json={"status": "ready"}, headers=dispatcher.headers)
    applied = client.post("/plans/apply", json=plan, headers=dispatcher.headers)
    assert applied.status_code == 200 and len(applied.json["applied"]) == 3
    run = client.get("/courier/orders", headers=couriers[0].headers).json["orders"]
    assert [o["id"] for o in run] == [o["id"] for o in orders] and [o["sequence"] for o in run] == [1, 2, 3]


@pytest.mark.parametrize(
    ("routes", "status"),
    [
        ([{"courierId": 1, "stops": [{"orderId": 1, "sequence": 1}, {"orderId": 1, "sequence": 2}]}], 422),
        ([{"courierId": 1, "stops": [{"orderId": 1, "sequence": 2}]}], 422),
        ([{"courierId": 1, "stops": []}], 422),
        ([], 422),
    ],
)
def test_apply_refuses_malformed_plans(client, dispatcher, routes, status) -> None:
    assert (
        client.post("/plans/apply", json={"routes": routes}, headers=dispatcher.headers).status_code == status
    )


def test_apply_with_an_unknown_order_or_an_inactive_courier_is_404(client, dispatcher, couriers) -> None:
    order = _orders(client, dispatcher, 1)[0]
    plan = {"routes": [{"courierId": couriers[0].courier.id, "stops": [{"orderId": 999999, "sequence": 1}]}]}
    assert client.post("/plans/apply", json=plan, headers=dispatcher.headers).status_code == 404
    client.patch(f"/couriers/{couriers[0].courier.id}", json={"active": False}, headers=dispatcher.headers)
    plan["routes"][0]["stops"][0]["orderId"] = int(order["id"])
    assert client.post("/plans/apply", json=plan, headers=dispatcher.headers).status_code == 404


def test_eta_runs_from_the_last_gps_fix_else_the_depot(client, dispatcher, couriers) -> None:
    courier = couriers[0]
    orders = _orders(client, dispatcher, 2)
    plan = {
        "routes": [
            {
                "courierId": courier.courier.id,
                "stops": [{"orderId": int(o["id"]), "sequence": i + 1} for i, o in enumerate(orders)],
            }
        ]
    }
    client.post("/plans/apply", json=plan, headers=dispatcher.headers)
    from_depot = client.get(f"/couriers/{courier.courier.id}/eta", headers=dispatcher.headers).json
    assert from_depot["origin"]["source"] == "depot" and from_depot["method"] == "road"
    assert [s["orderId"] for s in from_depot["stops"]] == [o["id"] for o in orders]
    first, second = (s["etaSeconds"] for s in from_depot["stops"])
    assert 0 < first < second and second - first >= 300  # five minutes of service at the first stop
    client.post(
        "/courier/location",
        json={"points": [{"lat": PINS[0][0], "lon": PINS[0][1], "capturedAt": clock.iso(clock.now())}]},
        headers=courier.headers,
    )
    from_gps = client.get("/courier/eta", headers=courier.headers).json
    assert from_gps["origin"]["source"] == "gps"
    assert from_gps["stops"][0]["etaSeconds"] < first


def test_eta_without_origin_or_stops(app, client) -> None:
    company = make_company("Nowhere", depot=None)
    dispatcher = make_member(app, company, "dispatcher")
    courier = make_member(app, company, "courier")
    order = ready_order(client, dispatcher)
    client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    body = client.get(f"/couriers/{courier.courier.id}/eta", headers=dispatcher.headers).json
    assert (
        body["origin"] is None and body["stops"][0]["etaSeconds"] is None and body["stops"][0]["eta"] is None
    )
    assert client.get("/couriers/999999/eta", headers=dispatcher.headers).status_code == 404
    courier_status(client, courier, order["id"], status="picked_up")


def test_an_order_whose_window_opens_after_the_shift_is_unassigned_not_a_failure(
    client, dispatcher, couriers
) -> None:
    on_time = _orders(client, dispatcher, 2)
    later = ready_order(
        client,
        dispatcher,
        pin={"lat": PINS[2][0], "lon": PINS[2][1]},
        deliveryWindowStart=clock.iso(clock.now() + timedelta(hours=6)),  # no end: open after 6 h
    )
    response = client.post("/plans/suggest", json={"shiftHours": 4}, headers=dispatcher.headers)
    assert response.status_code == 200, response.json
    assert response.json["unassigned"] == [later["id"]]
    planned = sorted(s["orderId"] for r in response.json["routes"] for s in r["stops"])
    assert planned == sorted(o["id"] for o in on_time)


@pytest.mark.parametrize(
    "body",
    [
        {"orderIds": [1, 1]},
        {"courierIds": [1, 1]},
        {"courierIds": list(range(1, 22))},
        {"orderIds": []},
    ],
    ids=["duplicate_order", "duplicate_courier", "more_than_20_routes", "empty_order_list"],
)
def test_suggest_refuses_duplicates_and_oversized_plans_with_422(client, dispatcher, couriers, body) -> None:
    _orders(client, dispatcher, 1)
    response = client.post("/plans/suggest", json=body, headers=dispatcher.headers)
    assert response.status_code == 422
    assert response.json["status"] == 422


def test_a_capacity_outside_its_range_is_invalid_input_400(client, dispatcher, couriers) -> None:
    _orders(client, dispatcher, 1)
    response = client.post("/plans/suggest", json={"capacity": 201}, headers=dispatcher.headers)
    assert response.status_code == 400 and response.json["errors"][0]["field"] == "capacity"


def test_a_courier_with_two_routes_is_refused_by_recompute_and_apply(client, dispatcher, couriers) -> None:
    first, second = _orders(client, dispatcher, 2)
    courier = couriers[0].courier.id
    draft = {
        "routes": [
            {"courierId": str(courier), "stops": [{"orderId": first["id"]}]},
            {"courierId": str(courier), "stops": [{"orderId": second["id"]}]},
        ]
    }
    assert client.post("/plans/recompute", json=draft, headers=dispatcher.headers).status_code == 422
    plan = {
        "routes": [
            {"courierId": courier, "stops": [{"orderId": int(first["id"]), "sequence": 1}]},
            {"courierId": courier, "stops": [{"orderId": int(second["id"]), "sequence": 1}]},
        ]
    }
    assert client.post("/plans/apply", json=plan, headers=dispatcher.headers).status_code == 422
    assert Assignment.select().count() == 0


def test_suggest_still_plans_on_straight_lines_when_the_engine_stops_and_says_so(
    app, client, dispatcher, couriers
) -> None:
    orders = _orders(client, dispatcher, 3)
    app.extensions["dispatch"].router.engine.stop()
    body = client.post("/plans/suggest", json={}, headers=dispatcher.headers).json
    assert body["method"] == "straight_line"
    assert sorted(s["orderId"] for r in body["routes"] for s in r["stops"]) == sorted(o["id"] for o in orders)


# -- issue 28: plans in the field -------------------------------------------------------------------


def _apply(client, dispatcher, courier, orders) -> list[dict]:
    plan = {
        "routes": [
            {
                "courierId": int(courier.courier.id),
                "stops": [{"orderId": int(o["id"]), "sequence": n} for n, o in enumerate(orders, 1)],
            }
        ]
    }
    applied = client.post("/plans/apply", json=plan, headers=dispatcher.headers)
    assert applied.status_code == 200, applied.json
    return applied.json["applied"]


def test_a_plan_applied_after_existing_stops_continues_their_numbering(client, dispatcher, couriers) -> None:
    orders = _orders(client, dispatcher, 4)
    narek = couriers[0]
    _apply(client, dispatcher, narek, orders[:2])
    courier_status(client, narek, orders[0]["id"], status="picked_up")
    later = _apply(client, dispatcher, narek, orders[2:])
    assert [s["sequence"] for s in later] == [3, 4]
    run = client.get("/courier/orders", headers=narek.headers).json["orders"]
    assert [(o["id"], o["sequence"]) for o in run] == [(o["id"], n) for n, o in enumerate(orders, 1)]
    # Re-applying the courier's own stops renumbers them after the others, never beside them.
    again = _apply(client, dispatcher, narek, [orders[3], orders[2]])
    assert [s["sequence"] for s in again] == [3, 4]


def test_suggestions_plan_for_couriers_on_shift_unless_asked_otherwise(client, dispatcher, couriers) -> None:
    _orders(client, dispatcher, 3)
    on, off = couriers
    client.post("/courier/shift/end", headers=off.headers)
    body = client.post("/plans/suggest", json={}, headers=dispatcher.headers).json
    assert [r["courierId"] for r in body["routes"]] == [str(on.courier.id)]
    every = client.post("/plans/suggest", json={"onShift": False}, headers=dispatcher.headers).json
    assert sorted(r["courierId"] for r in every["routes"]) == sorted(str(c.courier.id) for c in couriers)
    client.post("/courier/shift/end", headers=on.headers)
    nobody = client.post("/plans/suggest", json={}, headers=dispatcher.headers)
    assert nobody.status_code == 422 and nobody.json["errors"][0]["field"] == "courierIds"
    chosen = client.post(
        "/plans/suggest", json={"courierIds": [int(off.courier.id)]}, headers=dispatcher.headers
    )
    assert chosen.status_code == 200  # couriers chosen by name are planned, on shift or not


def test_a_lane_starts_at_the_depot_when_the_last_fix_is_too_old(app, client, dispatcher, couriers) -> None:
    _orders(client, dispatcher, 2)
    narek = couriers[0]
    old = clock.now() - timedelta(minutes=app.extensions["dispatch"].settings.eta_max_fix_minutes + 5)
    point = {"lat": ROAD_C[0], "lon": ROAD_C[1], "capturedAt": clock.iso(old)}
    assert (
        client.post("/courier/location", json={"points": [point]}, headers=narek.headers).status_code == 202
    )
    body = {"courierIds": [int(narek.courier.id)]}
    stale = client.post("/plans/suggest", json=body, headers=dispatcher.headers).json["routes"][0]["start"]
    assert stale["source"] == "depot" and (stale["lat"], stale["lon"]) == pytest.approx(ROAD_A)
    point["capturedAt"] = clock.iso(clock.now())
    client.post("/courier/location", json={"points": [point]}, headers=narek.headers)
    fresh = client.post("/plans/suggest", json=body, headers=dispatcher.headers).json["routes"][0]["start"]
    assert fresh["source"] == "gps"


def test_a_courier_s_open_orders_use_the_capacity_and_the_suggestion_says_so(
    client, dispatcher, couriers
) -> None:
    orders = _orders(client, dispatcher, 5)
    narek = couriers[0]
    _apply(client, dispatcher, narek, orders[:2])
    body = client.post(
        "/plans/suggest",
        json={"capacity": 3, "courierIds": [int(narek.courier.id)]},
        headers=dispatcher.headers,
    ).json
    route = body["routes"][0]
    assert route["capacity"] == 3 and route["held"] == 2
    assert len(route["stops"]) == 1 and len(body["unassigned"]) == 2
