"""The courier app: shifts, GPS, status moves with codes and idempotency, proof, cash handover."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest

from appliance.common import clock
from appliance.dispatch.models import Collection, CourierLocation, Order, Settlement
from appliance.dispatch.orders import codes
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def dispatcher(dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


@pytest.fixture
def courier(dispatch_app, company):
    return make_member(dispatch_app, company, "courier")


def _code(dispatch_app, order_id: str) -> str:
    order = Order.get_by_id(int(order_id))
    return codes.decrypt_code(
        dispatch_app.extensions["dispatch"].master_key, order.public_id, order.otp_cipher
    )


# -- shifts ------------------------------------------------------------------------------------------


def test_a_shift_opens_once_toggles_breaks_and_ends(dispatch_client, courier, dispatcher) -> None:
    assert dispatch_client.post("/courier/shift/break", headers=courier.headers).status_code == 409
    assert dispatch_client.post("/courier/shift/start", headers=courier.headers).status_code == 201
    assert dispatch_client.post("/courier/shift/start", headers=courier.headers).status_code == 409
    assert (
        dispatch_client.post("/courier/shift/break", headers=courier.headers).json["shift"]["status"]
        == "on_break"
    )
    assert (
        dispatch_client.post("/courier/shift/break", headers=courier.headers).json["shift"]["status"]
        == "active"
    )
    listed = dispatch_client.get("/couriers", headers=dispatcher.headers).json["couriers"][0]
    assert listed["online"] is True and listed["shift"]["status"] == "active"
    assert dispatch_client.post("/courier/shift/end", headers=courier.headers).status_code == 200
    assert dispatch_client.post("/courier/shift/end", headers=courier.headers).status_code == 409


def test_a_dispatcher_ending_a_shift_is_recorded(dispatch_client, courier, dispatcher) -> None:
    path = f"/couriers/{courier.courier.id}/shift/end"
    assert dispatch_client.post(path, headers=dispatcher.headers).status_code == 409
    dispatch_client.post("/courier/shift/start", headers=courier.headers)
    body = dispatch_client.post(path, headers=dispatcher.headers).json["courier"]
    assert body["shift"] is None and body["lastShift"]["endedByName"] == dispatcher.user.display_name


# -- GPS -------------------------------------------------------------------------------------------


def _point(minute: int, lat: float = 40.18) -> dict:
    return {"lat": lat, "lon": 44.51, "capturedAt": f"2026-11-22T10:{minute:02d}:00Z", "accuracyM": 8}


def test_gps_batches_are_deduplicated_and_the_current_location_is_the_newest(
    dispatch_client, courier
) -> None:
    first = dispatch_client.post(
        "/courier/location", json={"points": [_point(5), _point(1, 40.17)]}, headers=courier.headers
    )
    assert first.status_code == 202 and first.json["accepted"] == 2
    again = dispatch_client.post(
        "/courier/location",
        json={"points": [_point(5), _point(1, 40.17), _point(3)]},
        headers=courier.headers,
    )
    assert again.json["accepted"] == 1 and again.json["duplicates"] == 2
    assert CourierLocation.select().count() == 3
    current = dispatch_client.get("/courier/location/current", headers=courier.headers).json["location"]
    assert current["capturedAt"] == "2026-11-22T10:05:00.000Z"


@pytest.mark.parametrize(
    "points",
    [
        [],
        [_point(1)] * 51,
        [{"lat": 50.0, "lon": 44.5, "capturedAt": "2026-11-22T10:00:00Z"}],
        [{"lat": 40.1, "lon": 44.5}],
    ],
)
def test_bad_gps_batches_are_422(dispatch_client, courier, points) -> None:
    assert (
        dispatch_client.post(
            "/courier/location", json={"points": points}, headers=courier.headers
        ).status_code
        == 422
    )


def test_dispatchers_cannot_post_gps(dispatch_client, dispatcher) -> None:
    assert (
        dispatch_client.post(
            "/courier/location", json={"points": [_point(1)]}, headers=dispatcher.headers
        ).status_code
        == 403
    )


# -- status moves -------------------------------------------------------------------------------------


def test_a_delivery_with_a_code_proof_and_cash(dispatch_app, dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True, isCod=True, amountAmd=7000)
    assert [
        o["id"] for o in dispatch_client.get("/courier/orders", headers=courier.headers).json["orders"]
    ] == [order["id"]]
    assert courier_status(dispatch_client, courier, order["id"], status="delivered").status_code == 409
    assert courier_status(dispatch_client, courier, order["id"], status="picked_up").status_code == 200
    assert courier_status(dispatch_client, courier, order["id"], status="arrived").status_code == 200
    missing = courier_status(dispatch_client, courier, order["id"], status="delivered")
    assert missing.status_code == 422
    upload = dispatch_client.post(
        f"/courier/orders/{order['id']}/proof/upload-url",
        json={"contentType": "image/jpeg"},
        headers=courier.headers,
    ).json
    parts = urlsplit(upload["url"])
    assert (
        dispatch_client.put(
            f"{parts.path}?{parts.query}", data=b"jpeg", content_type="image/jpeg"
        ).status_code
        == 200
    )
    done = courier_status(
        dispatch_client,
        courier,
        order["id"],
        status="delivered",
        otpCode=_code(dispatch_app, order["id"]),
        recipientName="Gayane P",
        photoKey=upload["key"],
    )
    assert done.status_code == 200
    body = done.json["order"]
    assert body["status"] == "delivered" and body["collectedAmountAmd"] == 7000
    assert body["lastAttempt"]["courierId"] == str(courier.courier.id)
    photo = dispatch_client.get(f"/orders/{order['id']}/proof/photo-url", headers=dispatcher.headers)
    assert photo.status_code == 200
    assert dispatch_client.get("/courier/cash", headers=courier.headers).json["outstandingAmd"] == 7000


def test_wrong_codes_spend_a_shared_budget_then_lock(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    right = _code(dispatch_app, order["id"])
    wrong = "000000" if right != "000000" else "111111"
    assert (
        dispatch_client.post(
            f"/courier/orders/{order['id']}/otp/verify", json={"code": wrong}, headers=courier.headers
        ).status_code
        == 422
    )
    for _ in range(codes.MAX_ATTEMPTS - 1):
        assert (
            courier_status(
                dispatch_client, courier, order["id"], status="delivered", otpCode=wrong
            ).status_code
            == 422
        )
    assert (
        courier_status(dispatch_client, courier, order["id"], status="delivered", otpCode=right).status_code
        == 423
    )
    assert (
        dispatch_client.post(
            f"/courier/orders/{order['id']}/otp/verify", json={"code": right}, headers=courier.headers
        ).status_code
        == 423
    )


def test_failing_needs_a_reason_and_a_retry_starts_a_new_attempt(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert courier_status(dispatch_client, courier, order["id"], status="failed").status_code == 422
    failed = courier_status(
        dispatch_client, courier, order["id"], status="failed", failureReason="recipient_absent"
    )
    assert failed.json["order"]["failureReason"] == "recipient_absent"
    retry = dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    assert retry.json["order"]["attempt"] == 2 and retry.json["order"]["failureReason"] is None
    history = dispatch_client.get("/courier/history", headers=courier.headers).json["history"]
    assert history[0]["status"] == "failed" and history[0]["failureReason"] == "recipient_absent"


def test_a_settled_idempotency_key_replays_and_a_different_body_conflicts(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    first = courier_status(
        dispatch_client, courier, order["id"], status="picked_up", idempotencyKey="key-pickup-1"
    )
    replay = courier_status(
        dispatch_client, courier, order["id"], status="picked_up", idempotencyKey="key-pickup-1"
    )
    assert first.status_code == replay.status_code == 200
    assert first.json["replayed"] is False and replay.json["replayed"] is True
    other = courier_status(
        dispatch_client, courier, order["id"], status="arrived", idempotencyKey="key-pickup-1"
    )
    assert other.status_code == 409
    assert (
        courier_status(
            dispatch_client, courier, order["id"], status="arrived", idempotencyKey="short"
        ).status_code
        == 400
    )


def test_a_courier_touching_another_couriers_order_gets_404(
    dispatch_app, dispatch_client, company, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    other = make_member(dispatch_app, company, "courier")
    assert courier_status(dispatch_client, other, order["id"], status="picked_up").status_code == 404
    assert (
        dispatch_client.post(
            f"/courier/orders/{order['id']}/proof/upload-url",
            json={"contentType": "image/png"},
            headers=other.headers,
        ).status_code
        == 404
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("recipientName", ""),
        ("recipientName", "x" * 201),
        ("photoKey", "k" * 501),
        ("photoKey", ""),
        ("otpCode", ""),
        ("idempotencyKey", "k" * 7),
        ("otpCode", "1" * 33),
        ("notes", "n" * 1001),
        ("idempotencyKey", "k" * 129),
        ("collectedAmountAmd", -5),
        ("failureReason", "bored"),
    ],
)
def test_courier_status_limits_are_enforced(dispatch_client, dispatcher, courier, field, value) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert (
        courier_status(
            dispatch_client, courier, order["id"], status="picked_up", **{field: value}
        ).status_code
        == 400
    )


def test_a_proof_photo_of_another_type_is_415(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert (
        dispatch_client.post(
            f"/courier/orders/{order['id']}/proof/upload-url",
            json={"contentType": "image/gif"},
            headers=courier.headers,
        ).status_code
        == 415
    )


# -- cash ----------------------------------------------------------------------------------------


def _deliver_cod(dispatch_client, dispatcher, courier, amount: int, collected: int | None = None) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=amount)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    extra = {} if collected is None else {"collectedAmountAmd": collected}
    assert (
        courier_status(dispatch_client, courier, order["id"], status="delivered", **extra).status_code == 200
    )


def test_a_short_handover_carries_the_shortfall_until_a_later_one_covers_it(
    dispatch_client, dispatcher, courier
) -> None:
    assert dispatch_client.post("/courier/cash/settle", headers=courier.headers).status_code == 400
    _deliver_cod(dispatch_client, dispatcher, courier, 10000)
    _deliver_cod(dispatch_client, dispatcher, courier, 4000)
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
    _deliver_cod(dispatch_client, dispatcher, courier, 2000)
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
    _deliver_cod(dispatch_client, dispatcher, courier, 5000)
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
    _deliver_cod(dispatch_client, dispatcher, courier, 5000)
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
    _deliver_cod(dispatch_client, dispatcher, courier, 5000)
    settlement = dispatch_client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert (
        dispatch_client.post(
            f"/cash/settlements/{settlement['id']}/confirm", headers=stranger.headers
        ).status_code
        == 404
    )


def test_earnings_count_yerevan_days_and_weeks(dispatch_app, dispatch_client, company) -> None:
    clock.freeze(datetime(2026, 11, 23, 19, 50, tzinfo=UTC))  # Monday 23:50 in Yerevan
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    courier = make_member(dispatch_app, company, "courier")
    _deliver_cod(dispatch_client, dispatcher, courier, 1000)
    clock.freeze(datetime(2026, 11, 23, 20, 1, tzinfo=UTC))  # Tuesday 00:01 in Yerevan
    body = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert (
        body["today"]["delivered"] == 0
        and body["week"]["delivered"] == 1
        and body["allTime"]["delivered"] == 1
    )
    clock.advance(timedelta(days=6))
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    body = dispatch_client.get(f"/couriers/{courier.courier.id}/earnings", headers=dispatcher.headers).json
    assert body["week"]["delivered"] == 0 and body["allTime"]["amountAmd"] == 1000


# -- couriers (dispatcher side) ---------------------------------------------------------------------


def test_dispatchers_create_list_edit_and_deactivate_couriers(dispatch_client, dispatcher) -> None:
    created = dispatch_client.post(
        "/couriers",
        json={
            "email": "new@example.am",
            "password": "courier-pass",
            "displayName": "Davit",
            "vehicleLabel": "Bike",
        },
        headers=dispatcher.headers,
    )
    assert created.status_code == 201
    courier_id = created.json["courier"]["id"]
    assert (
        dispatch_client.post(
            "/couriers",
            json={"email": "new@example.am", "password": "courier-pass", "displayName": "Davit"},
            headers=dispatcher.headers,
        ).status_code
        == 409
    )
    assert (
        dispatch_client.post(
            "/couriers",
            json={"email": "x@example.am", "password": "short", "displayName": "D"},
            headers=dispatcher.headers,
        ).status_code
        == 400
    )
    edited = dispatch_client.patch(
        f"/couriers/{courier_id}", json={"active": False, "phone": "+37477000000"}, headers=dispatcher.headers
    )
    assert edited.json["courier"]["active"] is False
    assert (
        dispatch_client.get(f"/couriers/{courier_id}", headers=dispatcher.headers).json["courier"][
            "openOrders"
        ]
        == 0
    )
    # An inactive courier cannot sign in (issue 17: one notion of an active courier).
    assert (
        dispatch_client.post(
            "/auth/login", json={"email": "new@example.am", "password": "courier-pass"}
        ).status_code
        == 403
    )


def test_the_courier_edits_the_own_profile(dispatch_client, courier) -> None:
    assert dispatch_client.patch("/courier/me", json={}, headers=courier.headers).status_code == 400
    assert (
        dispatch_client.patch(
            "/courier/me", json={"preferredLanguage": "de"}, headers=courier.headers
        ).status_code
        == 400
    )
    body = dispatch_client.patch(
        "/courier/me", json={"preferredLanguage": "ru", "onboardingCompleted": True}, headers=courier.headers
    ).json["courier"]
    assert body["preferredLanguage"] == "ru" and body["onboardingCompleted"] is True
