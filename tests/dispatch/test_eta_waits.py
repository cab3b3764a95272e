"""True times (issue 46): a courier early for a stop's window waits there, and every later stop's
expected hand-over moves with it, as the planner times a route; `etaSeconds` (and `eta`) stay the
road estimate the specification defines."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.eta.service import SERVICE_SECONDS, expected_sequence
from appliance.dispatch.planning.solver import Problem, Stop, Vehicle, solve
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status

NOW = datetime(2026, 11, 20, 4, 40, tzinfo=UTC)  # 08:40 in Yerevan
OPENS = datetime(2026, 11, 20, 7, 0, tzinfo=UTC)  # 11:00 in Yerevan
WINDOW = {
    "deliveryWindowStart": "2026-11-20T11:00:00+04:00",
    "deliveryWindowEnd": "2026-11-20T14:00:00+04:00",
}


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def frozen():
    clock.freeze(NOW)
    yield
    clock.freeze(None)


@pytest.fixture
def dispatcher(frozen, dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


@pytest.fixture
def courier(frozen, dispatch_app, company):
    return make_member(dispatch_app, company, "courier", name="Narek")


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _same_second(text: str, moment: datetime) -> bool:
    """Each time is rounded to whole seconds on its own, so a difference of two may be one off."""
    return abs((_at(text) - moment).total_seconds()) <= 1


def test_the_second_stops_expected_time_includes_the_wait_for_the_first_stops_window(
    dispatch_client, dispatcher, courier
) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier, **WINDOW)
    second = assigned_order(dispatch_client, dispatcher, courier, pin={"lat": 40.1850, "lon": 44.5200})
    dispatch_client.post(
        "/courier/location",
        json={"points": [{"lat": 40.1800, "lon": 44.5100, "capturedAt": "2026-11-20T04:39:00Z"}]},
        headers=courier.headers,
    )
    for order in (first, second):
        courier_status(dispatch_client, courier, order["id"], status="picked_up")

    eta = dispatch_client.get(f"/couriers/{courier.courier.id}/eta", headers=dispatcher.headers).json
    one, two = eta["stops"]
    assert [one["orderId"], two["orderId"]] == [first["id"], second["id"]]
    # The road estimate: minutes away, no wait counted (the specification's etaSeconds and eta).
    assert one["etaSeconds"] < 3600 and _at(one["eta"]) == NOW + timedelta(seconds=one["etaSeconds"])
    assert _at(two["eta"]) == NOW + timedelta(seconds=two["etaSeconds"])
    # Expected: the courier waits for 11:00 at the first stop, hands over (5 minutes), drives on.
    drive_on = two["etaSeconds"] - one["etaSeconds"]  # the service at the first stop and the leg
    assert drive_on >= SERVICE_SECONDS
    assert _at(one["expectedAt"]) == OPENS
    assert _same_second(two["expectedAt"], OPENS + timedelta(seconds=drive_on))

    link = dispatch_client.post(f"/orders/{second['id']}/tracking", json={}, headers=dispatcher.headers).json
    view = dispatch_client.get(f"/track/{link['token']}").json
    assert view["etaSeconds"] == two["etaSeconds"]
    assert view["deliveryWindow"] is None
    assert view["expectedAt"] == two["expectedAt"]
    wait = view["waitSeconds"]
    assert _same_second(two["expectedAt"], _at(two["eta"]) + timedelta(seconds=wait))
    # Without a window of its own the page says minutes: the road estimate and the wait before it.
    page = dispatch_client.get(f"/t/{link['token']}?lang=en").get_data(as_text=True)
    minutes = round((view["etaSeconds"] + wait) / 60)
    assert minutes > 120 and f"Arriving in about {minutes} min" in page


def test_a_recomputed_plan_says_when_each_stop_is_expected_counting_the_wait(
    dispatch_client, dispatcher, courier
) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier, **WINDOW)
    second = assigned_order(dispatch_client, dispatcher, courier, pin={"lat": 40.1850, "lon": 44.5200})
    plan = {
        "routes": [
            {
                "courierId": str(courier.courier.id),
                "stops": [{"orderId": first["id"]}, {"orderId": second["id"]}],
            }
        ]
    }
    answer = dispatch_client.post("/plans/recompute", json=plan, headers=dispatcher.headers)
    assert answer.status_code == 200, answer.json
    one, two = answer.json["routes"][0]["stops"]
    assert one["etaSeconds"] < 3600  # the road estimate, as before
    assert _at(one["expectedAt"]) == OPENS
    assert _same_second(two["expectedAt"], OPENS + timedelta(seconds=two["etaSeconds"] - one["etaSeconds"]))


def _grid(points: list[tuple[float, float]]) -> list[list[int]]:
    return [[round(math.hypot(a[0] - b[0], a[1] - b[1])) for b in points] for a in points]


def test_expected_times_along_a_route_are_the_planners_own_arrivals() -> None:
    points = [(0, 0), (600, 0), (1200, 0), (1800, 0), (900, 700)]
    durations = _grid(points)
    opens = [0, 4000, 0, 9000]
    problem = Problem(
        durations=durations,
        vehicles=[Vehicle(start=0, capacity=10, available_until=40000)],
        stops=[Stop(node=i + 1, service=300, early=opens[i], late=30000) for i in range(4)],
    )
    solution = solve(problem, time_limit=0.3)
    (route,) = solution.routes
    assert sorted(route) == [0, 1, 2, 3]
    nodes = [0] + [problem.stops[s].node for s in route]
    legs = [float(durations[a][b]) for a, b in itertools.pairwise(nodes)]
    assert expected_sequence(legs, 300, [float(opens[s]) for s in route]) == solution.arrivals[0]
    # Waiting counts: a window that opens after the courier could be there moves every later stop.
    assert expected_sequence([100.0, 100.0], 300, [1000.0, None]) == [1000, 1400]
    assert expected_sequence([100.0, 100.0], 300, [None, None]) == [100, 500]
