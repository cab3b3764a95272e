"""The Cash table (dispatcher side) and the money rules: every collection counted exactly once."""

from __future__ import annotations

import threading

import pytest

from appliance.dispatch.cash.schemas import ConfirmResult, SettlementList
from appliance.dispatch.models import Collection, Settlement
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status
from tests.dispatch.test_courier_app_races import at_once


def collect(client, dispatcher, courier, amount: int, **extra) -> dict:
    order = assigned_order(client, dispatcher, courier, isCod=True, amountAmd=amount)
    courier_status(client, courier, order["id"], status="picked_up")
    assert courier_status(client, courier, order["id"], status="delivered", **extra).status_code == 200
    return order


def settle(client, courier) -> dict:
    response = client.post("/courier/cash/settle", headers=courier.headers)
    assert response.status_code == 201, response.json
    return response.json["settlement"]


def test_settlements_are_listed_by_status_newest_first(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    other = make_member(dispatch_app, company, "courier")
    collect(dispatch_client, dispatcher, courier, 1000)
    first = settle(dispatch_client, courier)
    collect(dispatch_client, dispatcher, other, 2000)
    second = settle(dispatch_client, other)
    waiting = SettlementList.model_validate(
        dispatch_client.get("/cash/settlements", headers=dispatcher.headers).json
    ).settlements
    assert [s.id for s in waiting] == [second["id"], first["id"]]
    assert waiting[0].courierName == other.courier.display_name and waiting[0].receivedAmd is None
    dispatch_client.post(f"/cash/settlements/{first['id']}/confirm", headers=dispatcher.headers)
    confirmed = dispatch_client.get("/cash/settlements?status=confirmed", headers=dispatcher.headers).json
    assert [s["id"] for s in confirmed["settlements"]] == [first["id"]]
    assert confirmed["settlements"][0]["acceptedByName"] == dispatcher.user.display_name
    submitted = dispatch_client.get("/cash/settlements?status=submitted", headers=dispatcher.headers).json
    assert [s["id"] for s in submitted["settlements"]] == [second["id"]]
    assert dispatch_client.get("/cash/settlements?status=lost", headers=dispatcher.headers).status_code == 400
    assert dispatch_client.get("/cash/settlements", headers=courier.headers).status_code == 403
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert dispatch_client.get("/cash/settlements", headers=stranger.headers).json == {"settlements": []}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"receivedAmd": -1}, 400),
        ({"receivedAmd": "1000"}, 400),
        ({"note": "n" * 1001}, 400),
        ({"receivedAmd": 3001}, 422),
        ({"receivedAmd": 2999}, 422),
        ({"receivedAmd": 2999, "note": "   "}, 422),
        ({"receivedAmd": 2999, "note": "one dram short"}, 200),
        ({"receivedAmd": 3000}, 200),
        ({"note": "all there"}, 200),
        ({"receivedAmd": 0, "note": "lost the bag"}, 200),
    ],
)
def test_a_confirmation_is_checked(dispatch_client, dispatcher, courier, body, status) -> None:
    collect(dispatch_client, dispatcher, courier, 3000)
    settlement = settle(dispatch_client, courier)
    response = dispatch_client.post(
        f"/cash/settlements/{settlement['id']}/confirm", json=body, headers=dispatcher.headers
    )
    assert response.status_code == status, response.json
    if status == 200:
        result = ConfirmResult.model_validate(response.json)
        received = body.get("receivedAmd", 3000)
        assert result.settlement.receivedAmd == received
        assert result.settlement.shortfallAmd == 3000 - received == result.courierOutstandingAmd


def test_unknown_settlements_are_404(dispatch_client, dispatcher) -> None:
    for settlement_id in ("999", str(2**64), "abc"):
        response = dispatch_client.post(
            f"/cash/settlements/{settlement_id}/confirm", headers=dispatcher.headers
        )
        assert response.status_code == 404


def test_cash_collected_while_a_handover_awaits_is_left_for_the_next_one(
    dispatch_client, dispatcher, courier
) -> None:
    collect(dispatch_client, dispatcher, courier, 1000)
    first = settle(dispatch_client, courier)
    collect(dispatch_client, dispatcher, courier, 700)
    assert dispatch_client.get("/courier/cash", headers=courier.headers).json["outstandingAmd"] == 1700
    done = dispatch_client.post(f"/cash/settlements/{first['id']}/confirm", headers=dispatcher.headers).json
    assert done["settlement"]["expectedAmd"] == 1000 and len(done["settlement"]["orders"]) == 1
    assert done["courierOutstandingAmd"] == 700
    second = settle(dispatch_client, courier)
    assert second["expectedAmd"] == 700
    covered = [o["orderId"] for o in first["orders"]] + [o["orderId"] for o in second["orders"]]
    assert len(covered) == len(set(covered)) == Collection.select().count() == 2


def test_collected_amount_defaults_to_the_cod_amount_and_can_be_given(
    dispatch_client, dispatcher, courier
) -> None:
    default = collect(dispatch_client, dispatcher, courier, 4000)
    given = collect(dispatch_client, dispatcher, courier, 4000, collectedAmountAmd=3500)
    amounts = {str(c.order_id): c.amount_amd for c in Collection.select()}
    assert amounts == {default["id"]: 4000, given["id"]: 3500}


def test_a_prepaid_order_records_no_collection(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, amountAmd=4000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(dispatch_client, courier, order["id"], status="delivered", collectedAmountAmd=4000)
    assert Collection.select().count() == 0
    assert dispatch_client.post("/courier/cash/settle", headers=courier.headers).status_code == 400


def test_a_shortfall_is_carried_through_several_handovers_until_covered(
    dispatch_client, dispatcher, courier
) -> None:
    collect(dispatch_client, dispatcher, courier, 5000)
    first = settle(dispatch_client, courier)
    dispatch_client.post(
        f"/cash/settlements/{first['id']}/confirm",
        json={"receivedAmd": 3000, "note": "2000 short"},
        headers=dispatcher.headers,
    )
    carried = settle(dispatch_client, courier)  # nothing new collected: the shortfall alone
    assert carried["expectedAmd"] == 2000 and carried["orders"] == []
    still = dispatch_client.post(
        f"/cash/settlements/{carried['id']}/confirm",
        json={"receivedAmd": 500, "note": "more later"},
        headers=dispatcher.headers,
    ).json
    assert still["courierOutstandingAmd"] == 1500
    collect(dispatch_client, dispatcher, courier, 1000)
    last = settle(dispatch_client, courier)
    assert last["expectedAmd"] == 2500
    done = dispatch_client.post(f"/cash/settlements/{last['id']}/confirm", headers=dispatcher.headers).json
    assert done["courierOutstandingAmd"] == 0


def test_a_settle_racing_a_confirmation_counts_every_collection_once(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    collect(dispatch_client, dispatcher, courier, 1000)
    first = settle(dispatch_client, courier)
    collect(dispatch_client, dispatcher, courier, 600)
    calls = iter(
        [
            lambda c: c.post(f"/cash/settlements/{first['id']}/confirm", headers=dispatcher.headers),
            lambda c: c.post("/courier/cash/settle", headers=courier.headers),
        ]
    )
    lock = threading.Lock()

    def run(client):
        with lock:
            call = next(calls)
        return call(client).status_code

    answers = at_once(dispatch_app, run)
    assert 200 in answers  # the confirmation always wins; the settle is 201 after it or 409 before it
    outstanding = dispatch_client.get("/courier/cash", headers=courier.headers).json["outstandingAmd"]
    assert outstanding == 600
    assert Collection.select().where(Collection.settlement.is_null()).count() == (0 if 201 in answers else 1)


def test_a_short_handover_carries_the_shortfall_until_a_later_one_covers_it(
    dispatch_client, dispatcher, courier
) -> None:
    assert dispatch_client.post("/courier/cash/settle", headers=courier.headers).status_code == 400
    collect(dispatch_client, dispatcher, courier, 10000)
    collect(dispatch_client, dispatcher, courier, 4000)
    submitted = dispatch_client.post("/courier/cash/settle", headers=courier.headers)
    assert submitted.status_code == 201
    settlement = submitted.json["settlement"]
    assert settlement["expectedAmd"] == 14000 and len(settlement["orders"]) == 2
    assert dispatch_client.post("/courier/cash/settle", headers=courier.headers).status_code == 409
    path = f"/cash/settlements/{settlement['id']}/confirm"
    assert (
        dispatch_client.post(path, json={"receivedAmd": 15000}, headers=dispatcher.headers).status_code == 422
    )
    assert (
        dispatch_client.post(path, json={"receivedAmd": 13000}, headers=dispatcher.headers).status_code == 422
    )
    confirmed = dispatch_client.post(
        path, json={"receivedAmd": 13000, "note": "1000 short"}, headers=dispatcher.headers
    )
    assert confirmed.status_code == 200
    assert (
        confirmed.json["settlement"]["shortfallAmd"] == 1000
        and confirmed.json["courierOutstandingAmd"] == 1000
    )
    assert confirmed.json["settlement"]["acceptedByName"] == dispatcher.user.display_name
    assert dispatch_client.post(path, json={}, headers=dispatcher.headers).status_code == 409
    collect(dispatch_client, dispatcher, courier, 2000)
    second = dispatch_client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    assert second["expectedAmd"] == 3000
    done = dispatch_client.post(f"/cash/settlements/{second['id']}/confirm", headers=dispatcher.headers)
    assert done.json["courierOutstandingAmd"] == 0
    listed = dispatch_client.get("/cash/settlements?status=confirmed", headers=dispatcher.headers).json[
        "settlements"
    ]
    assert len(listed) == 2


def test_two_settle_calls_at_once_make_one_settlement(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    collect(dispatch_client, dispatcher, courier, 5000)
    results: list[int] = []

    def settle() -> None:
        results.append(
            dispatch_app.test_client().post("/courier/cash/settle", headers=courier.headers).status_code
        )

    threads = [threading.Thread(target=settle) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [201, 409]
    assert Settlement.select().count() == 1
    assert Collection.select().where(Collection.settlement.is_null()).count() == 0


def test_two_confirmations_at_once_confirm_once(dispatch_app, dispatch_client, dispatcher, courier) -> None:
    collect(dispatch_client, dispatcher, courier, 5000)
    settlement = dispatch_client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    results: list[int] = []

    def confirm() -> None:
        results.append(
            dispatch_app.test_client()
            .post(f"/cash/settlements/{settlement['id']}/confirm", headers=dispatcher.headers)
            .status_code
        )

    threads = [threading.Thread(target=confirm) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [200, 409]


def test_another_companys_settlement_is_404(dispatch_app, dispatch_client, dispatcher, courier) -> None:
    collect(dispatch_client, dispatcher, courier, 5000)
    settlement = dispatch_client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert (
        dispatch_client.post(
            f"/cash/settlements/{settlement['id']}/confirm", headers=stranger.headers
        ).status_code
        == 404
    )
