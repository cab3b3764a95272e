"""The order state machine, table-driven: every (state, target) pair for the dispatcher's and the
courier's triggers, each legal move writing one audit row and one realtime event, each illegal
one answering 409 and changing nothing."""

from __future__ import annotations

import pytest

from appliance.dispatch.models import Order, OrderEvent, RealtimeEvent
from appliance.dispatch.orders.state import COURIER_MOVES, DISPATCHER_MOVES, transition
from tests.dispatch.factory import make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order

STATES = ("draft", "ready", "assigned", "picked_up", "arrived", "delivered", "failed", "cancelled")

# The specification's moves, written out here independently of appliance/dispatch/orders/state.py.
DISPATCHER_LEGAL = {
    ("draft", "ready"),
    ("draft", "cancelled"),
    ("ready", "draft"),
    ("ready", "cancelled"),
    ("assigned", "ready"),  # unassign
    ("assigned", "cancelled"),
    ("picked_up", "failed"),  # with a reason
    ("arrived", "failed"),
    ("failed", "ready"),  # retry: a new attempt
}
COURIER_LEGAL = {
    ("assigned", "picked_up"),
    ("assigned", "failed"),
    ("picked_up", "arrived"),
    ("picked_up", "delivered"),
    ("picked_up", "failed"),
    ("arrived", "delivered"),
    ("arrived", "failed"),
}
COURIER_TARGETS = ("picked_up", "arrived", "delivered", "failed")
# States in which the order has no courier: for the courier it is not theirs (404).
WITHOUT_COURIER = {"draft", "ready", "cancelled"}


def order_in(client, dispatcher, courier, state: str) -> dict:
    """An order brought to ``state`` through legal moves only."""
    if state == "draft":
        return create_order(client, dispatcher)
    if state == "ready":
        return ready_order(client, dispatcher)
    if state == "cancelled":
        order = create_order(client, dispatcher)
        client.post(f"/orders/{order['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers)
        return order
    order = assigned_order(client, dispatcher, courier)
    path = {
        "assigned": [],
        "picked_up": ["picked_up"],
        "arrived": ["picked_up", "arrived"],
        "delivered": ["picked_up", "delivered"],
        "failed": ["failed"],
    }[state]
    for step in path:
        extra = {"failureReason": "refused"} if step == "failed" else {}
        assert courier_status(client, courier, order["id"], status=step, **extra).status_code == 200
    return order


def trail(order_id: str) -> list[tuple[str, str | None, str | None]]:
    return [
        (e.kind, e.from_status, e.to_status)
        for e in OrderEvent.select().where(OrderEvent.order == int(order_id)).order_by(OrderEvent.id)
    ]


def test_the_tables_of_the_code_are_the_tables_of_the_specification() -> None:
    assert {(a, b) for a, tos in DISPATCHER_MOVES.items() for b in tos} == DISPATCHER_LEGAL
    assert {(a, b) for a, tos in COURIER_MOVES.items() for b in tos} == COURIER_LEGAL


@pytest.mark.parametrize(("start", "to"), [(a, b) for a in STATES for b in STATES])
def test_a_dispatcher_move_is_applied_when_the_table_allows_it_and_409_otherwise(
    dispatch_client, dispatcher, courier, start, to
) -> None:
    order = order_in(dispatch_client, dispatcher, courier, start)
    before = trail(order["id"])
    events_before = RealtimeEvent.select().count()
    response = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": to, "reason": "table"}, headers=dispatcher.headers
    )
    stored = Order.get_by_id(int(order["id"]))
    if (start, to) in DISPATCHER_LEGAL:
        assert response.status_code == 200, response.json
        assert response.json["order"]["status"] == to == stored.status
        changes = [row for row in trail(order["id"])[len(before) :] if row[0] == "status_changed"]
        assert changes == [("status_changed", start, to)]
        kinds = [e.kind for e in RealtimeEvent.select().where(RealtimeEvent.id > events_before)]
        assert "order.status_changed" in kinds
    else:
        assert response.status_code == 409, response.json
        assert stored.status == start
        assert trail(order["id"]) == before
        assert RealtimeEvent.select().count() == events_before


@pytest.mark.parametrize(("start", "to"), [(a, b) for a in STATES for b in COURIER_TARGETS])
def test_a_courier_move_is_applied_when_the_table_allows_it_and_refused_otherwise(
    dispatch_client, dispatcher, courier, start, to
) -> None:
    order = order_in(dispatch_client, dispatcher, courier, start)
    before = trail(order["id"])
    extra = {"failureReason": "recipient_absent"} if to == "failed" else {}
    response = courier_status(dispatch_client, courier, order["id"], status=to, **extra)
    stored = Order.get_by_id(int(order["id"]))
    if (start, to) in COURIER_LEGAL:
        assert response.status_code == 200, response.json
        assert response.json["order"]["status"] == to == stored.status
        assert response.json["replayed"] is False
        assert trail(order["id"])[len(before) :] == [("status_changed", start, to)]
    else:
        assert response.status_code == (404 if start in WITHOUT_COURIER else 409), response.json
        assert stored.status == start and trail(order["id"]) == before


@pytest.mark.parametrize("start", STATES)
def test_assignment_moves_only_ready_and_assigned_orders(
    dispatch_app, dispatch_client, company, dispatcher, courier, start
) -> None:
    other = make_member(dispatch_app, company, "courier")
    order = order_in(dispatch_client, dispatcher, courier, start)
    response = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": other.courier.id}, headers=dispatcher.headers
    )
    assert response.status_code == (201 if start in {"ready", "assigned"} else 409), response.json
    assert Order.get_by_id(int(order["id"])).status == (
        "assigned" if start in {"ready", "assigned"} else start
    )


def test_transition_refuses_an_unknown_actor(dispatch_client, dispatcher) -> None:
    from appliance.common.problems import Conflict

    order = Order.get_by_id(int(create_order(dispatch_client, dispatcher)["id"]))
    with pytest.raises(Conflict):
        transition(order, "ready", None, by="somebody")


def test_a_retry_starts_a_new_attempt_and_clears_the_previous_outcome(
    dispatch_client, dispatcher, courier
) -> None:
    order = order_in(dispatch_client, dispatcher, courier, "failed")
    retried = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    ).json["order"]
    assert retried["attempt"] == 2 and retried["failureReason"] is None
    assert retried["courierId"] is None and retried["proof"] is None and retried["finishedAt"] is None


def test_a_dispatcher_may_fail_an_order_without_a_reason(dispatch_client, dispatcher, courier) -> None:
    order = order_in(dispatch_client, dispatcher, courier, "picked_up")
    response = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "failed"}, headers=dispatcher.headers
    )
    assert response.status_code == 200  # the spec's reason is optional
    assert Order.get_by_id(int(order["id"])).status == "failed"
