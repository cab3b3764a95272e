"""Listing by Asia/Yerevan working day (created, due, finished, carried over; default limits) and
assignment races (two threads, one active assignment per order)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.models import Assignment, Order, RealtimeEvent
from appliance.dispatch.orders.schemas import OrderList
from appliance.dispatch.orders.service import assign_orders
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order
from tests.dispatch.test_courier_app_races import at_once

YEREVAN = timedelta(hours=4)  # Asia/Yerevan has no daylight saving time


def local(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    """A Yerevan wall-clock time as UTC."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC) - YEREVAN


def listed(client, dispatcher, query: str) -> list[str]:
    response = client.get(f"/orders?{query}", headers=dispatcher.headers)
    assert response.status_code == 200, response.json
    OrderList.model_validate(response.json)
    return [o["id"] for o in response.json["orders"]]


def test_orders_at_2359_and_0001_local_time_belong_to_two_working_days(dispatch_client, dispatcher) -> None:
    clock.freeze(local(2026, 11, 21, 23, 59))
    before_midnight = create_order(dispatch_client, dispatcher)
    dispatch_client.post(
        f"/orders/{before_midnight['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    clock.freeze(local(2026, 11, 22, 0, 1))
    after_midnight = create_order(dispatch_client, dispatcher)
    dispatch_client.post(
        f"/orders/{after_midnight['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    assert listed(dispatch_client, dispatcher, "date=2026-11-21") == [before_midnight["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-22") == [after_midnight["id"]]


def test_an_order_due_on_a_later_day_is_listed_on_that_day(dispatch_client, dispatcher) -> None:
    clock.freeze(local(2026, 11, 20, 10, 0))
    due = create_order(
        dispatch_client,
        dispatcher,
        deliveryWindowStart=clock.iso(local(2026, 11, 23, 10, 0)),
        deliveryWindowEnd=clock.iso(local(2026, 11, 23, 12, 0)),
    )
    dispatch_client.post(
        f"/orders/{due['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    assert listed(dispatch_client, dispatcher, "date=2026-11-23") == [due["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-22") == []


@pytest.mark.parametrize("bound", ["deliveryWindowStart", "deliveryWindowEnd"])
def test_a_window_with_one_bound_is_due_at_that_bound(dispatch_client, dispatcher, bound) -> None:
    clock.freeze(local(2026, 11, 20, 10, 0))
    due = create_order(dispatch_client, dispatcher, **{bound: clock.iso(local(2026, 11, 23, 0, 1))})
    dispatch_client.post(
        f"/orders/{due['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    assert listed(dispatch_client, dispatcher, "date=2026-11-23") == [due["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-22") == []
    assert listed(dispatch_client, dispatcher, "date=2026-11-24") == []


def test_an_order_finished_on_a_later_day_is_listed_on_that_day_and_not_carried_further(
    dispatch_client, dispatcher, courier
) -> None:
    clock.freeze(local(2026, 11, 20, 22, 0))
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    clock.freeze(local(2026, 11, 21, 0, 30))
    courier_status(dispatch_client, courier, order["id"], status="delivered")
    assert listed(dispatch_client, dispatcher, "date=2026-11-20") == [order["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-21") == [order["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-22") == []


def test_open_work_is_carried_over_but_not_into_days_before_it_existed(
    dispatch_app, dispatch_client, company
) -> None:
    clock.freeze(local(2026, 11, 20, 9, 0))
    open_order = ready_order(dispatch_client, make_member(dispatch_app, company, "dispatcher"))
    clock.freeze(local(2026, 11, 25, 9, 0))
    dispatcher = make_member(dispatch_app, company, "dispatcher")  # a session of that day
    assert listed(dispatch_client, dispatcher, "date=2026-11-24") == [open_order["id"]]
    assert listed(dispatch_client, dispatcher, "date=2026-11-19") == []


def _bulk_orders(company, count: int, created: datetime) -> None:
    rows = [
        {
            "company": company.id,
            "public_id": f"BULK{n:06d}",
            "status": "delivered",
            "recipient_name": "R",
            "recipient_phone": "+37491000000",
            "address_hy": "Address",
            "lat": 40.18,
            "lon": 44.51,
            "created_at": created + timedelta(seconds=n),
            "updated_at": created,
            "finished_at": created + timedelta(seconds=n),
        }
        for n in range(count)
    ]
    Order.insert_many(rows).execute()


def test_default_limits_are_200_without_a_date_and_1000_with_one(
    dispatch_client, company, dispatcher
) -> None:
    _bulk_orders(company, 1001, local(2026, 11, 22, 8, 0))
    without = dispatch_client.get("/orders", headers=dispatcher.headers).json
    assert len(without["orders"]) == 200 and without["hasMore"] is True
    assert without["orders"][0]["publicId"] == "BULK001000"  # newest first
    day = dispatch_client.get("/orders?date=2026-11-22", headers=dispatcher.headers).json
    assert len(day["orders"]) == 1000 and day["hasMore"] is True
    full = dispatch_client.get("/orders?date=2026-11-22&limit=2000", headers=dispatcher.headers).json
    assert len(full["orders"]) == 1001 and full["hasMore"] is False
    exact = dispatch_client.get("/orders?date=2026-11-22&limit=1001", headers=dispatcher.headers).json
    assert len(exact["orders"]) == 1001 and exact["hasMore"] is False


def test_another_companys_orders_are_never_listed(dispatch_app, dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher)
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert listed(dispatch_client, stranger, "") == []


@pytest.mark.parametrize(
    "query",
    ["date=2026-02-30", "date=2026-11-22T00:00", "date=", "date=%202026-11-22", "limit=-1", "limit=1.5"],
)
def test_more_bad_listing_parameters_are_400(dispatch_client, dispatcher, query) -> None:
    response = dispatch_client.get(f"/orders?{query}", headers=dispatcher.headers)
    assert response.status_code == 400 and response.json["status"] == 400


# -- races ---------------------------------------------------------------------------------------------


def test_two_assignments_of_one_order_to_one_courier_at_once_make_one(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = ready_order(dispatch_client, dispatcher)
    answers = at_once(
        dispatch_app,
        lambda c: (
            c.post(
                f"/orders/{order['id']}/assign",
                json={"courierId": courier.courier.id},
                headers=dispatcher.headers,
            ).status_code
        ),
    )
    assert sorted(answers) == [201, 409]
    assert Assignment.select().where(Assignment.order == int(order["id"])).count() == 1


def test_two_assignments_to_two_couriers_at_once_leave_one_active_assignment(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    other = make_member(dispatch_app, company, "courier")
    order = ready_order(dispatch_client, dispatcher)
    targets = iter([courier.courier.id, other.courier.id])
    lock = threading.Lock()

    def assign(c):
        with lock:
            target = next(targets)
        return c.post(
            f"/orders/{order['id']}/assign", json={"courierId": target}, headers=dispatcher.headers
        ).status_code

    assert at_once(dispatch_app, assign) == [201, 201]
    rows = list(Assignment.select().where(Assignment.order == int(order["id"])).order_by(Assignment.id))
    assert [r.status for r in rows] == ["cancelled", "active"]
    assert Order.get_by_id(int(order["id"])).courier_id == rows[1].courier_id
    kinds = [e.kind for e in RealtimeEvent.select().where(RealtimeEvent.kind.startswith("assignment."))]
    assert kinds == ["assignment.created", "assignment.cancelled", "assignment.created"]


def test_a_plan_is_applied_whole_or_not_at_all(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    first, second = ready_order(dispatch_client, dispatcher), create_order(dispatch_client, dispatcher)
    with pytest.raises(Exception) as refused:
        assign_orders(
            company.id,
            [(int(first["id"]), courier.courier.id, 1), (int(second["id"]), courier.courier.id, 2)],
            None,
        )
    assert getattr(refused.value, "status", None) == 409
    assert Order.get_by_id(int(first["id"])).status == "ready" and Assignment.select().count() == 0
    with pytest.raises(Exception) as unknown:
        assign_orders(company.id, [(int(first["id"]), 10**30, 1)], None)
    assert getattr(unknown.value, "status", None) == 404
    applied = assign_orders(company.id, [(int(first["id"]), courier.courier.id, 1)], dispatcher.user.id)
    assert applied == [{"orderId": first["id"], "courierId": str(courier.courier.id), "sequence": 1}]
    assert Order.get_by_id(int(first["id"])).sequence == 1


def test_two_overlapping_plans_at_once_leave_one_active_assignment_per_order(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    other = make_member(dispatch_app, company, "courier")
    ids = [int(ready_order(dispatch_client, dispatcher)["id"]) for _ in range(3)]
    plans = iter(
        [
            [(o, courier.courier.id, n + 1) for n, o in enumerate(ids)],
            [(o, other.courier.id, n + 1) for n, o in enumerate(ids)],
        ]
    )
    lock = threading.Lock()

    def apply(_client):
        with lock:
            plan = next(plans)
        with dispatch_app.app_context():
            return len(assign_orders(company.id, plan, None))

    assert at_once(dispatch_app, apply) == [3, 3]
    for order_id in ids:
        active = Assignment.select().where((Assignment.order == order_id) & (Assignment.status == "active"))
        assert active.count() == 1
        assert active.get().courier_id == Order.get_by_id(order_id).courier_id
