"""A day's orders moved many at a time (POST /orders/bulk), a parcel handed to another courier
(POST /orders/{id}/reassign), and the one table of moves every order carries (issue 45)."""

from __future__ import annotations

from appliance.common import clock
from appliance.dispatch.models import Order, OrderEvent
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order


def _bulk(client, member, body, key=None):
    headers = dict(member.headers)
    if key:
        headers["Idempotency-Key"] = key
    return client.post("/orders/bulk", json=body, headers=headers)


def test_bulk_make_ready_acts_on_each_order_and_reports_each_one(dispatch_client, dispatcher) -> None:
    drafts = [create_order(dispatch_client, dispatcher) for _ in range(3)]
    already = ready_order(dispatch_client, dispatcher)
    ids = [int(o["id"]) for o in [*drafts, already]]
    answer = _bulk(dispatch_client, dispatcher, {"orderIds": ids, "action": "ready"})
    assert answer.status_code == 200
    results = {r["orderId"]: r for r in answer.json["results"]}
    assert [results[o["id"]]["ok"] for o in drafts] == [True, True, True]
    refused = results[already["id"]]
    assert refused["ok"] is False and refused["problem"]["status"] == 409
    assert {Order.get_by_id(i).status for i in ids} == {"ready"}


def test_bulk_assign_queues_each_order_after_the_couriers_last_stop(
    dispatch_client, dispatcher, courier
) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier)
    orders = [ready_order(dispatch_client, dispatcher) for _ in range(3)]
    body = {"orderIds": [int(o["id"]) for o in orders], "action": "assign", "courierId": courier.courier.id}
    answer = _bulk(dispatch_client, dispatcher, body)
    assert all(r["ok"] for r in answer.json["results"])
    sequences = [Order.get_by_id(int(o["id"])).sequence for o in [first, *orders]]
    assert sequences == [1, 2, 3, 4]
    listed = dispatch_client.get("/courier/orders", headers=courier.headers).json["orders"]
    assert [o["id"] for o in listed] == [o["id"] for o in [first, *orders]]


def test_bulk_cancel_needs_a_reason_and_records_it(dispatch_client, dispatcher) -> None:
    order = ready_order(dispatch_client, dispatcher)
    missing = _bulk(dispatch_client, dispatcher, {"orderIds": [int(order["id"])], "action": "cancel"})
    assert missing.status_code == 400 and missing.json["errors"][0]["field"] == "reason"
    done = _bulk(
        dispatch_client,
        dispatcher,
        {"orderIds": [int(order["id"])], "action": "cancel", "reason": "shop closed"},
    )
    assert done.json["results"] == [{"orderId": order["id"], "ok": True}]
    event = OrderEvent.get((OrderEvent.order == int(order["id"])) & (OrderEvent.to_status == "cancelled"))
    assert '"reason":"shop closed"' in event.data


def test_bulk_move_shifts_windows_to_the_day_and_gives_windowless_orders_the_whole_day(
    dispatch_client, dispatcher
) -> None:
    windowed = create_order(
        dispatch_client,
        dispatcher,
        deliveryWindowStart="2026-11-22T07:00:00Z",  # 11:00 in Yerevan
        deliveryWindowEnd="2026-11-22T10:00:00Z",
    )
    plain = create_order(dispatch_client, dispatcher)
    body = {"orderIds": [int(windowed["id"]), int(plain["id"])], "action": "move", "date": "2026-11-24"}
    answer = _bulk(dispatch_client, dispatcher, body)
    assert all(r["ok"] for r in answer.json["results"]), answer.json
    moved = dispatch_client.get(f"/orders/{windowed['id']}", headers=dispatcher.headers).json["order"]
    assert (moved["deliveryWindowStart"], moved["deliveryWindowEnd"]) == (
        "2026-11-24T07:00:00.000Z",
        "2026-11-24T10:00:00.000Z",
    )
    whole = dispatch_client.get(f"/orders/{plain['id']}", headers=dispatcher.headers).json["order"]
    assert (whole["deliveryWindowStart"], whole["deliveryWindowEnd"]) == (
        "2026-11-23T20:00:00.000Z",
        "2026-11-24T20:00:00.000Z",
    )


def test_a_retried_bulk_call_replays_its_answer_and_another_body_under_its_key_is_409(
    dispatch_client, dispatcher
) -> None:
    orders = [create_order(dispatch_client, dispatcher) for _ in range(2)]
    body = {"orderIds": [int(o["id"]) for o in orders], "action": "ready"}
    first = _bulk(dispatch_client, dispatcher, body, key="bulk-key-0001")
    again = _bulk(dispatch_client, dispatcher, body, key="bulk-key-0001")
    assert first.json == again.json and all(r["ok"] for r in again.json["results"])
    other = _bulk(
        dispatch_client, dispatcher, {**body, "action": "cancel", "reason": "x"}, key="bulk-key-0001"
    )
    assert other.status_code == 409 and other.json["code"] == "idempotency_key_reused"
    assert _bulk(dispatch_client, dispatcher, body, key="short").status_code == 400


def test_another_companys_orders_in_a_bulk_call_behave_as_missing(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    theirs = create_order(dispatch_client, stranger)
    answer = _bulk(dispatch_client, dispatcher, {"orderIds": [int(theirs["id"])], "action": "ready"})
    assert answer.json["results"][0]["problem"]["status"] == 404
    assert Order.get_by_id(int(theirs["id"])).status == "draft"


def test_a_picked_up_order_is_handed_to_another_courier_with_both_names_in_its_history(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    other = make_member(dispatch_app, company, "courier", name="Lilit")
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/reassign",
            json={"courierId": other.courier.id},
            headers=dispatcher.headers,
        ).status_code
        == 409
    )  # not picked up yet: an ordinary reassignment does that
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    moved = dispatch_client.post(
        f"/orders/{order['id']}/reassign", json={"courierId": other.courier.id}, headers=dispatcher.headers
    )
    assert moved.status_code == 200, moved.json
    body = moved.json["order"]
    assert (body["status"], body["courierId"]) == ("picked_up", str(other.courier.id))
    assert body["handedOverFrom"]["courierId"] == str(courier.courier.id)
    theirs = dispatch_client.get("/courier/orders", headers=other.headers).json["orders"]
    assert [o["id"] for o in theirs] == [order["id"]]
    assert theirs[0]["handedOverFrom"]["courierName"] == courier.courier.display_name
    assert dispatch_client.get("/courier/orders", headers=courier.headers).json["orders"] == []
    delivered = courier_status(
        dispatch_client, other, order["id"], status="delivered", recipientName="Gayane"
    )
    assert delivered.status_code == 200
    history = dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json["events"]
    handed = next(e for e in history if e["kind"] == "handed_over")
    assert handed["data"]["fromCourierName"] == courier.courier.display_name
    assert handed["data"]["courierName"] == "Lilit"


def test_every_order_carries_the_moves_its_status_allows(dispatch_client, dispatcher, courier) -> None:
    draft = create_order(dispatch_client, dispatcher)
    assert draft["allowedMoves"] == {
        "status": ["cancelled", "ready"],
        "courier": [],
        "assign": False,
        "deliverForCourier": False,
        "reassign": False,
    }
    order = assigned_order(dispatch_client, dispatcher, courier)
    picked = courier_status(dispatch_client, courier, order["id"], status="picked_up").json["order"]
    assert picked["allowedMoves"]["courier"] == ["arrived", "delivered", "failed"]
    assert picked["allowedMoves"]["reassign"] and picked["allowedMoves"]["deliverForCourier"]


def test_a_late_notice_is_for_an_order_on_its_way_by_either_endpoint(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    late = dispatch_client.post(f"/orders/{order['id']}/messages/late", json={}, headers=dispatcher.headers)
    notify = dispatch_client.post(f"/orders/{order['id']}/notify-late", json={}, headers=dispatcher.headers)
    assert (late.status_code, notify.status_code) == (409, 409)
    assert late.json["code"] == "not_out_for_delivery"
    clock.now()  # the rule is one function: orders/statuses.late_notice_allowed
