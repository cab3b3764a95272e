"""Orders: creation, editing, the state machine, assignment, listing by Yerevan day."""

from __future__ import annotations

from datetime import UTC, datetime

import peewee
import pytest

from appliance.common import clock
from appliance.dispatch.models import OrderEvent, RealtimeEvent
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, assigned_order, create_order, ready_order


def test_a_new_order_is_a_draft_with_a_public_id_and_cod_defaults_to_the_amount(
    dispatch_client, dispatcher
) -> None:
    order = create_order(dispatch_client, dispatcher, isCod=True)
    assert order["status"] == "draft" and len(order["publicId"]) == 10
    assert order["codAmountAmd"] == 5000 and order["pin"] == ORDER["pin"]
    assert order["courierId"] is None and order["attempt"] == 1


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"pin": {"lat": 10.0, "lon": 44.5}}, 422),
        ({"pin": {"lat": 40.1, "lon": 50.0}}, 422),
        ({"amountAmd": -1}, 400),
        ({"amountAmd": "5"}, 400),
        ({"recipientName": ""}, 400),
        ({"weightKg": -2}, 400),
        ({"addressLabelHy": None}, 400),
        ({"deliveryWindowStart": "2026-11-22T12:00:00Z", "deliveryWindowEnd": "2026-11-22T11:00:00Z"}, 422),
    ],
)
def test_bad_orders_are_refused(dispatch_client, dispatcher, change, status) -> None:
    response = dispatch_client.post("/orders", json=ORDER | change, headers=dispatcher.headers)
    assert response.status_code == status


def test_only_draft_and_ready_orders_can_be_edited(dispatch_client, dispatcher, courier) -> None:
    order = ready_order(dispatch_client, dispatcher)
    edited = dispatch_client.patch(
        f"/orders/{order['id']}", json={"weightKg": 2.5}, headers=dispatcher.headers
    )
    assert edited.status_code == 200 and edited.json["order"]["weightKg"] == 2.5
    dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    assert (
        dispatch_client.patch(
            f"/orders/{order['id']}", json={"weightKg": 3}, headers=dispatcher.headers
        ).status_code
        == 409
    )


DISPATCHER_MOVES = [
    ("draft", "ready", 200),
    ("draft", "cancelled", 200),
    ("draft", "delivered", 409),
    ("draft", "assigned", 409),
    ("ready", "draft", 200),
    ("ready", "cancelled", 200),
    ("ready", "picked_up", 409),
]


@pytest.mark.parametrize(("start", "to", "status"), DISPATCHER_MOVES)
def test_dispatcher_moves_follow_the_table(dispatch_client, dispatcher, start, to, status) -> None:
    order = (
        create_order(dispatch_client, dispatcher)
        if start == "draft"
        else ready_order(dispatch_client, dispatcher)
    )
    response = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": to}, headers=dispatcher.headers
    )
    assert response.status_code == status


def test_cancelled_and_delivered_are_final(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    for to in ("draft", "ready", "cancelled"):
        assert (
            dispatch_client.post(
                f"/orders/{order['id']}/status", json={"status": to}, headers=dispatcher.headers
            ).status_code
            == 409
        )


def test_assignment_and_reassignment_record_realtime_and_audit_events(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    other = make_member(dispatch_app, company, "courier")
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert order["status"] == "assigned" and order["courierId"] == str(courier.courier.id)
    again = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    assert again.status_code == 409
    moved = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": other.courier.id}, headers=dispatcher.headers
    )
    assert moved.status_code == 201 and moved.json["assignment"]["courierId"] == str(other.courier.id)
    kinds = [e.kind for e in RealtimeEvent.select().order_by(RealtimeEvent.id)]
    assert kinds[-3:] == ["assignment.created", "assignment.cancelled", "assignment.created"]
    trail = [
        e["kind"]
        for e in dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json[
            "events"
        ]
    ]
    assert trail[-2:] == ["unassigned", "assigned"]


def test_assigning_needs_a_ready_order_and_a_known_active_courier(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    draft = create_order(dispatch_client, dispatcher)
    assert (
        dispatch_client.post(
            f"/orders/{draft['id']}/assign",
            json={"courierId": courier.courier.id},
            headers=dispatcher.headers,
        ).status_code
        == 409
    )
    order = ready_order(dispatch_client, dispatcher)
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/assign", json={"courierId": 999999}, headers=dispatcher.headers
        ).status_code
        == 404
    )
    stranger = make_member(dispatch_app, make_company("Other"), "courier")
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/assign",
            json={"courierId": stranger.courier.id},
            headers=dispatcher.headers,
        ).status_code
        == 404
    )
    assert (
        dispatch_client.post(
            "/orders/999999/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
        ).status_code
        == 404
    )


def test_unassigning_returns_the_order_to_ready(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    response = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    assert response.status_code == 200 and response.json["order"]["courierId"] is None


def test_another_companys_order_behaves_as_missing(dispatch_app, dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    for method, path in (("get", f"/orders/{order['id']}"), ("get", f"/orders/{order['id']}/events")):
        assert getattr(dispatch_client, method)(path, headers=stranger.headers).status_code == 404
    assert (
        dispatch_client.patch(
            f"/orders/{order['id']}", json={"weightKg": 1}, headers=stranger.headers
        ).status_code
        == 404
    )
    assert dispatch_client.get("/orders/not-a-number", headers=stranger.headers).status_code == 404


def test_couriers_cannot_use_dispatcher_order_routes(dispatch_client, courier) -> None:
    assert dispatch_client.get("/orders", headers=courier.headers).status_code == 403
    assert dispatch_client.post("/orders", json=ORDER, headers=courier.headers).status_code == 403


def test_the_audit_trail_cannot_be_changed(dispatch_client, dispatcher) -> None:
    create_order(dispatch_client, dispatcher)
    with pytest.raises(peewee.DatabaseError):
        OrderEvent.update(kind="forged").execute()
    with pytest.raises(peewee.DatabaseError):
        OrderEvent.delete().execute()


def test_listing_by_day_follows_the_yerevan_day_boundary(dispatch_client, dispatcher) -> None:
    # 23:59 and 00:01 Yerevan time (UTC+4) fall on two different working days.
    clock.freeze(datetime(2026, 11, 21, 19, 59, tzinfo=UTC))
    late = create_order(dispatch_client, dispatcher)
    dispatch_client.post(
        f"/orders/{late['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    clock.freeze(datetime(2026, 11, 21, 20, 1, tzinfo=UTC))
    early = create_order(dispatch_client, dispatcher)
    day21 = dispatch_client.get("/orders?date=2026-11-21", headers=dispatcher.headers).json
    day22 = dispatch_client.get("/orders?date=2026-11-22", headers=dispatcher.headers).json
    assert [o["id"] for o in day21["orders"]] == [late["id"]]
    assert [o["id"] for o in day22["orders"]] == [early["id"]]


def test_open_work_is_carried_over_to_later_days(dispatch_client, dispatcher) -> None:
    clock.freeze(datetime(2026, 11, 20, 8, 0, tzinfo=UTC))
    open_order = ready_order(dispatch_client, dispatcher)
    clock.freeze(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    assert [
        o["id"]
        for o in dispatch_client.get("/orders?date=2026-11-22", headers=dispatcher.headers).json["orders"]
    ] == [open_order["id"]]


def test_listing_is_newest_first_with_has_more_at_the_limit(dispatch_client, dispatcher) -> None:
    ids = [create_order(dispatch_client, dispatcher)["id"] for _ in range(3)]
    body = dispatch_client.get("/orders?limit=2", headers=dispatcher.headers).json
    assert [o["id"] for o in body["orders"]] == ids[::-1][:2] and body["hasMore"] is True
    body = dispatch_client.get("/orders?limit=3", headers=dispatcher.headers).json
    assert body["hasMore"] is False


@pytest.mark.parametrize(
    "query", ["date=2026-13-01", "date=22-11-2026", "date=yesterday", "limit=0", "limit=2001", "limit=ten"]
)
def test_bad_listing_parameters_are_400(dispatch_client, dispatcher, query) -> None:
    assert dispatch_client.get(f"/orders?{query}", headers=dispatcher.headers).status_code == 400
