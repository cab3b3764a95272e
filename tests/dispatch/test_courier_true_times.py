"""A courier's move queued offline is recorded at the moment it was tapped (issue 46): the phone's
``occurredAt`` within bounds (not in the future, not before the order's previous move, at most
the offline window ago); otherwise the server's time, with the phone's moment and the difference
kept in the order's history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.models import Collection
from tests.dispatch.orders_helpers import assigned_order, courier_status

NOW = datetime(2026, 11, 20, 4, 35, 46, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def frozen():
    clock.freeze(NOW - timedelta(minutes=10))  # the order is assigned then; tokens live longer
    yield
    clock.freeze(None)


def _moves(client, dispatcher, order_id):
    events = client.get(f"/orders/{order_id}/events", headers=dispatcher.headers).json["events"]
    return {e["toStatus"]: e for e in events if e["kind"] == "status_changed"}


def test_a_delivery_tapped_offline_is_recorded_at_the_tap_with_its_cash(
    frozen, dispatch_client, dispatcher, courier
):
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, codAmountAmd=4300)
    clock.freeze(NOW)
    picked_at, delivered_at = NOW - timedelta(minutes=9), NOW - timedelta(minutes=2)
    assert (
        courier_status(
            dispatch_client, courier, order["id"], status="picked_up", occurredAt=_iso(picked_at)
        ).status_code
        == 200
    )
    done = courier_status(
        dispatch_client, courier, order["id"], status="delivered", occurredAt="2026-11-20T08:33:46+04:00"
    )
    assert done.status_code == 200
    assert done.json["order"]["finishedAt"] == "2026-11-20T04:33:46.000Z"
    moves = _moves(dispatch_client, dispatcher, order["id"])
    assert moves["picked_up"]["createdAt"] == clock.iso(picked_at)
    assert moves["delivered"]["createdAt"] == clock.iso(delivered_at)
    assert moves["delivered"]["data"]["receivedAt"] == clock.iso(NOW)
    assert Collection.get(Collection.order == int(order["id"])).collected_at == delivered_at
    history = dispatch_client.get("/courier/history", headers=courier.headers).json
    items = history["items"] if isinstance(history, dict) and "items" in history else history
    assert clock.iso(delivered_at) in str(items)


@pytest.mark.parametrize(
    ("offset", "because"),
    [
        (timedelta(minutes=5), "future"),
        (-timedelta(hours=13), "older_than_offline_window"),
        (-timedelta(minutes=30), "before_previous_move"),
    ],
    ids=["in-the-future", "older-than-the-offline-window", "before-the-previous-move"],
)
def test_a_phone_moment_out_of_bounds_is_recorded_at_the_servers_time_with_the_difference(
    frozen, dispatch_client, dispatcher, courier, offset, because
):
    order = assigned_order(dispatch_client, dispatcher, courier)  # assigned ten minutes before NOW
    clock.freeze(NOW)
    told = NOW + offset
    answer = courier_status(dispatch_client, courier, order["id"], status="picked_up", occurredAt=_iso(told))
    assert answer.status_code == 200
    move = _moves(dispatch_client, dispatcher, order["id"])["picked_up"]
    assert move["createdAt"] == clock.iso(NOW)
    assert move["data"]["occurredAtRefused"] == clock.iso(told)
    assert move["data"]["occurredAtRefusedBecause"] == because
    assert move["data"]["clockDifferenceSeconds"] == round((NOW - told).total_seconds())


def test_a_move_without_a_phone_moment_is_recorded_at_the_servers_time(
    frozen, dispatch_client, dispatcher, courier
):
    order = assigned_order(dispatch_client, dispatcher, courier)
    clock.freeze(NOW)
    assert courier_status(dispatch_client, courier, order["id"], status="picked_up").status_code == 200
    move = _moves(dispatch_client, dispatcher, order["id"])["picked_up"]
    assert move["createdAt"] == clock.iso(NOW)
    assert "receivedAt" not in move["data"] and "occurredAtRefused" not in move["data"]
