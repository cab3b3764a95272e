"""The cash rules called directly, without HTTP: the courier's balance, handovers and their
confirmation (test_cash_endpoints.py covers the same table through the API)."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.common.db import write_transaction
from appliance.common.problems import BadRequest, Conflict, Invalid, NotFound
from appliance.dispatch.cash import service
from appliance.dispatch.courier_app.service import update_own_profile
from appliance.dispatch.db import database
from appliance.dispatch.models import Collection, Courier, Order
from tests.dispatch.factory import make_company
from tests.dispatch.orders_helpers import assigned_order


def collected(client, dispatcher, courier, amount: int) -> Courier:
    """An order of ``courier`` whose cash the courier took (recorded as the delivery does)."""
    order = Order.get_by_id(
        int(assigned_order(client, dispatcher, courier, isCod=True, amountAmd=amount)["id"])
    )
    with write_transaction(database):
        service.record_collection(courier.courier, order, amount)
    return courier.courier


def test_nothing_is_outstanding_and_nothing_can_be_settled_at_first(dispatch_app, courier) -> None:
    assert service.outstanding(courier.courier.id) == 0
    with pytest.raises(BadRequest):
        service.settle(courier.courier)
    assert service.cash_summary(courier.courier) == {
        "outstandingAmd": 0,
        "openSettlement": None,
        "unrecordedAmd": 0,
        "recentCollections": [],
    }


def test_a_handover_covers_what_was_collected_and_one_awaits_at_a_time(
    dispatch_client, dispatcher, courier
) -> None:
    holder = collected(dispatch_client, dispatcher, courier, 4000)
    collected(dispatch_client, dispatcher, courier, 1500)
    submitted = service.settle(holder)
    assert (submitted["status"], submitted["expectedAmd"], len(submitted["orders"])) == ("submitted", 5500, 2)
    assert service.outstanding(holder.id) == 5500  # still held until a dispatcher confirms
    with pytest.raises(Conflict):
        service.settle(holder)
    assert Collection.select().where(Collection.settlement.is_null()).count() == 0


@pytest.mark.parametrize(
    ("received", "note", "error"),
    [(5501, None, Invalid), (5000, None, Invalid), (5000, "  ", Invalid)],
)
def test_a_confirmation_above_the_amount_or_short_without_a_note_is_refused(
    dispatch_client, dispatcher, courier, received, note, error
) -> None:
    holder = collected(dispatch_client, dispatcher, courier, 5500)
    settlement = service.settle(holder)
    with pytest.raises(error):
        service.confirm(holder.company_id, int(settlement["id"]), dispatcher.user.id, received, note)
    assert service.list_settlements(holder.company_id, "submitted")[0]["id"] == settlement["id"]


def test_a_short_confirmation_carries_the_shortfall_to_the_next_handover(
    dispatch_client, dispatcher, courier
) -> None:
    holder = collected(dispatch_client, dispatcher, courier, 5000)
    first = service.settle(holder)
    done = service.confirm(holder.company_id, int(first["id"]), dispatcher.user.id, 4200, "800 short")
    assert done["settlement"]["shortfallAmd"] == 800 and done["courierOutstandingAmd"] == 800
    assert service.carried_shortfall(holder.id) == 800
    with pytest.raises(Conflict):
        service.confirm(holder.company_id, int(first["id"]), dispatcher.user.id, None, None)
    assert service.settle(holder)["expectedAmd"] == 800


def test_another_companys_settlement_is_missing(dispatch_app, dispatch_client, dispatcher, courier) -> None:
    holder = collected(dispatch_client, dispatcher, courier, 1000)
    settlement = service.settle(holder)
    other = make_company("Other")
    with pytest.raises(NotFound):
        service.confirm(other.id, int(settlement["id"]), dispatcher.user.id, None, None)
    assert service.list_settlements(other.id, "submitted") == []


def test_a_courier_edits_the_own_profile_and_bad_changes_are_refused(dispatch_app, courier) -> None:
    body = update_own_profile(courier.courier, {"displayName": "Aram K", "preferredLanguage": "en"})
    assert (body["displayName"], body["preferredLanguage"]) == ("Aram K", "en")
    assert Courier.get_by_id(courier.courier.id).display_name == "Aram K"
    for changes in ({}, {"preferredLanguage": "de"}, {"displayName": None}):
        with pytest.raises(BadRequest):
            update_own_profile(courier.courier, changes)


def test_a_handover_asked_while_another_commits_waits_and_is_refused_as_a_conflict(
    dispatch_client, dispatcher, courier, monkeypatch
) -> None:
    """The first handover is held open just before it commits; the second, asked meanwhile, must
    wait for it and answer 409 (on PostgreSQL it went on with the snapshot it started from, found
    the collections taken and answered 400 "Nothing to settle")."""
    collected(dispatch_client, dispatcher, courier, 5000)
    inside, release = threading.Event(), threading.Event()
    real_record = service.record_event

    def held(*args, **kwargs):
        real_record(*args, **kwargs)
        if threading.current_thread().name == "first":
            inside.set()
            release.wait(10)

    monkeypatch.setattr(service, "record_event", held)
    outcomes: dict[str, object] = {}

    def settle(name: str) -> None:
        with database.connection_context():
            try:
                outcomes[name] = service.settle(Courier.get_by_id(courier.courier.id))["expectedAmd"]
            except (BadRequest, Conflict) as refused:
                outcomes[name] = type(refused).__name__

    first = threading.Thread(target=settle, args=("first",), name="first")
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=settle, args=("second",), name="second")
    second.start()
    time.sleep(0.3)  # let the second reach its wait (not a timed assertion: any order passes)
    release.set()
    first.join(10)
    second.join(10)
    assert outcomes == {"first": 5000, "second": "Conflict"}
