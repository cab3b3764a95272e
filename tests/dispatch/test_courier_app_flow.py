"""The courier's working day through the app: shifts, GPS, status moves with delivery codes and
idempotency keys, proof photos. (Cash is in test_cash_endpoints.py, the dispatcher's courier
routes in test_couriers_endpoints.py.)"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from appliance.dispatch.models import CourierLocation, Order, RealtimeEvent
from appliance.dispatch.orders import codes
from tests.dispatch.factory import make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status


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
    # The wrong try that locked the code told open boards (order.updated), once.
    updates = RealtimeEvent.select().where(
        (RealtimeEvent.kind == "order.updated") & RealtimeEvent.payload.contains(f'"orderId":"{order["id"]}"')
    )
    assert updates.count() == 1


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
