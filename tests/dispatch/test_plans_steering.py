"""The planner steered through POST /plans/suggest (issue 45): the day planned, per-courier
limits, locked stops, lateness allowed or not, and every order left out named with its reason.
Real roads (Monaco's network moved onto Yerevan), the real solvers, real HTTP requests."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Assignment
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ready_order
from tests.dispatch.test_plans_and_eta import PINS
from tests.geo_fixtures import ROAD_A

# 10:00 in Yerevan (UTC+4): a working morning, far from midnight either way.
MORNING = datetime(2026, 11, 28, 6, 0, tzinfo=UTC)
TOMORROW = "2026-11-29"


@pytest.fixture(autouse=True)
def _morning():
    clock.freeze(MORNING)
    yield
    clock.reset()


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
    for member in members:
        assert client.post("/courier/shift/start", headers=member.headers).status_code == 201
    return members


def _order(client, dispatcher, n: int, **fields) -> dict:
    lat, lon = PINS[n % len(PINS)]
    return ready_order(client, dispatcher, pin={"lat": lat, "lon": lon}, **fields)


def _window(start: datetime, hours: float) -> dict:
    return {
        "deliveryWindowStart": clock.iso(start),
        "deliveryWindowEnd": clock.iso(start + timedelta(hours=hours)),
    }


def _suggest(client, dispatcher, **body):
    response = client.post("/plans/suggest", json=body, headers=dispatcher.headers)
    assert response.status_code == 200, response.json
    return response.json


def _planned(body: dict) -> list[str]:
    return sorted(s["orderId"] for r in body["routes"] for s in r["stops"])


def _lane(body: dict, courier) -> dict:
    return next(r for r in body["routes"] if r["courierId"] == str(courier.courier.id))


def test_a_later_date_plans_that_day_s_windowed_orders_and_ignores_today_s(
    client, dispatcher, couriers
) -> None:
    tomorrow_morning = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)  # 11:00 in Yerevan
    tomorrow = [_order(client, dispatcher, n, **_window(tomorrow_morning, 3)) for n in range(3)]
    today = _order(client, dispatcher, 3, **_window(MORNING + timedelta(hours=1), 3))
    anyday = _order(client, dispatcher, 4)  # no window: any day's plan may take it
    off = couriers[1]
    client.post("/courier/shift/end", headers=off.headers)  # tomorrow, off shift today counts too

    body = _suggest(client, dispatcher, date=TOMORROW)

    assert _planned(body) == sorted([o["id"] for o in tomorrow] + [anyday["id"]])
    assert today["id"] not in body["unassigned"] and body["unplaced"] == []
    assert sorted(r["courierId"] for r in body["routes"]) == sorted(str(c.courier.id) for c in couriers)
    assert {r["start"]["source"] for r in body["routes"]} == {"depot"}
    # Times count from tomorrow's midnight in Yerevan: its stops are served inside their window.
    midnight = datetime(2026, 11, 28, 20, 0, tzinfo=UTC)
    assert datetime.fromisoformat(body["timesFrom"]) == midnight
    opens = (tomorrow_morning - midnight).total_seconds()
    etas = {s["orderId"]: s["etaSeconds"] for r in body["routes"] for s in r["stops"]}
    assert all(opens <= etas[o["id"]] <= opens + 3 * 3600 for o in tomorrow)
    # Today's plan, without a date, still sees today's order.
    assert today["id"] in _planned(_suggest(client, dispatcher, onShift=False))


def test_a_courier_s_own_capacity_and_shift_override_the_plan_wide_ones(client, dispatcher, couriers) -> None:
    orders = [_order(client, dispatcher, n) for n in range(12)]
    narek = couriers[0]
    only_narek = {"courierIds": [int(narek.courier.id)]}
    plan_wide = _suggest(client, dispatcher, **only_narek)
    assert len(plan_wide["unassigned"]) == 2  # 10 stops per courier by default

    own = _suggest(client, dispatcher, couriers=[{"courierId": int(narek.courier.id), "capacity": 20}])
    assert _planned(own) == sorted(o["id"] for o in orders) and own["unassigned"] == []
    assert _lane(own, narek)["capacity"] == 20

    # His shift starts at noon (two hours from now): no stop before it.
    late_start = _suggest(
        client,
        dispatcher,
        couriers=[{"courierId": int(narek.courier.id), "capacity": 20, "shiftStart": "12:00"}],
    )
    assert min(s["etaSeconds"] for s in _lane(late_start, narek)["stops"]) >= 2 * 3600
    # A shift that ends before a window opens leaves that order out, for its shift's end.
    evening = _order(client, dispatcher, 0, **_window(MORNING + timedelta(hours=6), 1))
    short = _suggest(
        client,
        dispatcher,
        couriers=[{"courierId": int(narek.courier.id), "capacity": 20, "shiftEnd": "13:00"}],
    )
    assert {"orderId": evening["id"], "reason": "shift_end"} in short["unplaced"]


def test_a_locked_stop_stays_at_its_courier_and_index_after_re_optimisation(
    client, dispatcher, couriers
) -> None:
    [_order(client, dispatcher, n) for n in range(6)]
    first = _suggest(client, dispatcher, capacity=3)
    narek, ani = couriers
    moved = _lane(first, narek)["stops"][0]["orderId"]
    lock = {"orderId": int(moved), "courierId": int(ani.courier.id), "index": 1}

    again = _suggest(client, dispatcher, capacity=3, locked=[lock])

    assert _lane(again, ani)["stops"][1]["orderId"] == moved
    assert moved not in [s["orderId"] for s in _lane(again, narek)["stops"]]
    assert again["unassigned"] == []


def test_late_allow_places_an_order_whose_window_cannot_be_met_and_shows_its_lateness(
    client, dispatcher, couriers
) -> None:
    missed = _order(client, dispatcher, 0, **_window(MORNING, 0.1))
    on_time = _order(client, dispatcher, 1)
    clock.advance(timedelta(minutes=10))  # the six-minute window closed four minutes ago

    forbid = _suggest(client, dispatcher)
    assert forbid["unassigned"] == [missed["id"]]
    assert forbid["unplaced"] == [{"orderId": missed["id"], "reason": "window"}]

    allow = _suggest(client, dispatcher, late="allow")
    stops = {s["orderId"]: s for r in allow["routes"] for s in r["stops"]}
    assert allow["unassigned"] == [] and allow["unplaced"] == []
    assert stops[missed["id"]]["lateSeconds"] == 240 + stops[missed["id"]]["etaSeconds"]
    assert stops[on_time["id"]]["lateSeconds"] == 0


def test_an_over_capacity_order_is_unplaced_for_capacity(client, dispatcher, couriers) -> None:
    heavy = _order(client, dispatcher, 0, weightKg=50)
    light = _order(client, dispatcher, 1, weightKg=5)
    limits = [{"courierId": int(c.courier.id), "capacityKg": 20} for c in couriers]
    body = _suggest(client, dispatcher, couriers=limits)
    assert _planned(body) == [light["id"]]
    assert body["unplaced"] == [{"orderId": heavy["id"], "reason": "capacity"}]
    # One stop each, three orders: the one left over had no room anywhere.
    _order(client, dispatcher, 2)
    crowded = _suggest(client, dispatcher, capacity=1)
    assert [u["reason"] for u in crowded["unplaced"]] == ["capacity"]


def test_the_answer_without_any_new_field_is_as_before_plus_unplaced(client, dispatcher, couriers) -> None:
    [_order(client, dispatcher, n) for n in range(5)]
    body = client.post(
        "/plans/suggest",
        json={"capacity": 1, "courierIds": [couriers[0].courier.id]},
        headers=dispatcher.headers,
    ).json
    assert set(body) == {"suggested", "routes", "unassigned", "unplaced", "method"}
    assert all(set(s) == {"orderId", "etaSeconds"} for r in body["routes"] for s in r["stops"])
    assert len(body["unassigned"]) == 4
    assert [u["orderId"] for u in body["unplaced"]] == body["unassigned"]
    assert {u["reason"] for u in body["unplaced"]} == {"capacity"}
    assert Assignment.select().count() == 0


@pytest.mark.parametrize(
    "body",
    [
        {"date": "2026-11-27"},
        {"date": "9999-12-31"},
        {"couriers": [{"courierId": 0}, {"courierId": 0}]},
        {"locked": [{"orderId": 999999, "courierId": 1, "index": 0}]},
        {"courierIds": [1], "couriers": [{"courierId": 2}]},
        {"couriers": [{"courierId": 0, "shiftStart": "14:00", "shiftEnd": "12:00"}]},
    ],
    ids=[
        "past_day",
        "beyond_a_year",
        "one_courier_twice",
        "lock_of_an_order_not_planned",
        "limits_for_a_courier_not_chosen",
        "shift_ends_first",
    ],
)
def test_steering_that_cannot_be_followed_is_refused_with_422(client, dispatcher, couriers, body) -> None:
    _order(client, dispatcher, 0)
    for entry in body.get("couriers", []):
        entry["courierId"] = entry["courierId"] or int(couriers[0].courier.id)
    response = client.post("/plans/suggest", json=body, headers=dispatcher.headers)
    assert response.status_code == 422, response.json


def test_a_courier_s_own_service_time_and_start_point_shape_its_lane(client, dispatcher, couriers) -> None:
    [_order(client, dispatcher, n) for n in range(3)]
    narek = couriers[0]
    start = {"lat": PINS[5][0], "lon": PINS[5][1]}
    own = {"courierId": int(narek.courier.id), "serviceMinutes": 30, "start": start, "returnToDepot": True}
    lane = _lane(_suggest(client, dispatcher, couriers=[own]), narek)
    assert lane["start"] == start | {"source": "point"}
    etas = [s["etaSeconds"] for s in lane["stops"]]
    assert len(etas) == 3 and all(b - a >= 30 * 60 for a, b in itertools.pairwise(etas))


def test_another_company_s_orders_and_couriers_steer_nothing_and_answer_as_missing_ones(
    app, client, dispatcher, couriers
) -> None:
    _order(client, dispatcher, 0)
    other = make_company("Other", depot=ROAD_A)
    stranger = make_member(app, other, "courier")
    their_order = _order(client, make_member(app, other, "dispatcher"), 1)
    ours = int(couriers[0].courier.id)

    def refusal(**body):
        response = client.post("/plans/suggest", json=body, headers=dispatcher.headers)
        return response.status_code, response.json.get("title")

    assert refusal(couriers=[{"courierId": int(stranger.courier.id)}]) == refusal(
        couriers=[{"courierId": 999999}]
    )
    assert refusal(couriers=[{"courierId": 999999}])[0] == 404
    theirs = refusal(locked=[{"orderId": int(their_order["id"]), "courierId": ours, "index": 0}])
    missing = refusal(locked=[{"orderId": 999999, "courierId": ours, "index": 0}])
    assert theirs == missing and theirs[0] == 422
    foreign_courier = refusal(locked=[{"orderId": 1, "courierId": int(stranger.courier.id), "index": 0}])
    assert foreign_courier[0] == 422
