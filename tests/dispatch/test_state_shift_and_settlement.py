"""The courier shift and the cash settlement state machines, table-driven."""

from __future__ import annotations

import pytest

from appliance.dispatch.models import Courier, Settlement, Shift
from tests.dispatch.orders_helpers import assigned_order, courier_status


def shift_state(courier) -> str:
    shift = Shift.get_or_none((Shift.courier == courier.courier.id) & Shift.ended_at.is_null())
    if shift is None:
        return "none"
    return "on_break" if shift.on_break else "active"


def bring_shift_to(client, courier, state: str) -> None:
    steps = {"none": [], "active": ["start"], "on_break": ["start", "break"]}[state]
    for step in steps:
        assert client.post(f"/courier/shift/{step}", headers=courier.headers).status_code in (200, 201)


SHIFT_TABLE = [
    # (state, trigger, status, state after)
    ("none", "start", 201, "active"),
    ("none", "break", 409, "none"),
    ("none", "end", 409, "none"),
    ("none", "dispatcher_end", 409, "none"),
    ("active", "start", 409, "active"),
    ("active", "break", 200, "on_break"),
    ("active", "end", 200, "none"),
    ("active", "dispatcher_end", 200, "none"),
    ("on_break", "start", 409, "on_break"),
    ("on_break", "break", 200, "active"),
    ("on_break", "end", 200, "none"),
    ("on_break", "dispatcher_end", 200, "none"),
]


@pytest.mark.parametrize(("state", "trigger", "status", "after"), SHIFT_TABLE)
def test_a_shift_moves_as_the_table_says(
    dispatch_client, dispatcher, courier, state, trigger, status, after
) -> None:
    bring_shift_to(dispatch_client, courier, state)
    if trigger == "dispatcher_end":
        response = dispatch_client.post(
            f"/couriers/{courier.courier.id}/shift/end", headers=dispatcher.headers
        )
    else:
        response = dispatch_client.post(f"/courier/shift/{trigger}", headers=courier.headers)
    assert response.status_code == status, response.json
    assert shift_state(courier) == after
    online = Courier.get_by_id(courier.courier.id).online
    assert online is (after != "none")
    if status == 200 and trigger == "dispatcher_end":
        last = response.json["courier"]["lastShift"]
        assert last["status"] == "ended" and last["endedByName"] == dispatcher.user.display_name
        assert response.json["courier"]["shift"] is None
    elif status == 200 and trigger == "end":
        assert response.json["shift"]["status"] == "ended" and response.json["shift"]["endedByName"] is None
    elif status in (200, 201):
        assert response.json["shift"]["status"] == after


def test_a_courier_has_at_most_one_open_shift_in_the_database(dispatch_client, courier) -> None:
    import peewee

    from appliance.common import clock

    dispatch_client.post("/courier/shift/start", headers=courier.headers)
    with pytest.raises(peewee.IntegrityError):
        Shift.create(courier=courier.courier.id, started_at=clock.now(), open_flag=1)


def _collect(client, dispatcher, courier, amount: int) -> None:
    order = assigned_order(client, dispatcher, courier, isCod=True, amountAmd=amount)
    courier_status(client, courier, order["id"], status="picked_up")
    assert courier_status(client, courier, order["id"], status="delivered").status_code == 200


def bring_cash_to(client, dispatcher, courier, state: str) -> str | None:
    """nothing (no cash held), outstanding, submitted or confirmed; the settlement id if any."""
    if state == "nothing":
        return None
    _collect(client, dispatcher, courier, 3000)
    if state == "outstanding":
        return None
    settlement = client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    if state == "confirmed":
        client.post(f"/cash/settlements/{settlement['id']}/confirm", headers=dispatcher.headers)
    return settlement["id"]


SETTLEMENT_TABLE = [
    ("nothing", "settle", 400),
    ("outstanding", "settle", 201),
    ("submitted", "settle", 409),
    ("submitted", "confirm", 200),
    ("confirmed", "confirm", 409),
    ("confirmed", "settle", 400),
]


@pytest.mark.parametrize(("state", "trigger", "status"), SETTLEMENT_TABLE)
def test_a_settlement_moves_as_the_table_says(
    dispatch_client, dispatcher, courier, state, trigger, status
) -> None:
    settlement_id = bring_cash_to(dispatch_client, dispatcher, courier, state)
    before = {(s.id, s.status) for s in Settlement.select()}
    if trigger == "settle":
        response = dispatch_client.post("/courier/cash/settle", headers=courier.headers)
    else:
        response = dispatch_client.post(
            f"/cash/settlements/{settlement_id}/confirm", headers=dispatcher.headers
        )
    assert response.status_code == status, response.json
    after = {(s.id, s.status) for s in Settlement.select()}
    if status >= 400:
        assert after == before
    elif trigger == "settle":
        assert response.json["settlement"]["status"] == "submitted"
        assert response.json["settlement"]["expectedAmd"] == 3000
    else:
        assert response.json["settlement"]["status"] == "confirmed"
        assert response.json["courierOutstandingAmd"] == 0
