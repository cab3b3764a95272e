"""Every row of the Courier app table except /courier/eta, checked against the documented
response models: GPS, the own profile, orders, delivery codes, proof uploads, cash and history."""

from __future__ import annotations

from datetime import datetime

import pytest

from appliance.common import clock
from appliance.common.objects import StorageUnavailable
from appliance.dispatch.cash.schemas import CashSummary, SettlementEnvelope
from appliance.dispatch.courier_app.schemas import (
    CourierOrders,
    History,
    LocationAccepted,
    LocationCurrent,
    OtpResult,
    StatusResult,
    UploadUrl,
)
from appliance.dispatch.couriers.schemas import CourierEnvelope
from appliance.dispatch.models import Order
from appliance.dispatch.orders import codes
from tests.dispatch.factory import make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status


def point(second: int, lat: float = 40.18) -> dict:
    return {"lat": lat, "lon": 44.51, "capturedAt": f"2026-11-22T10:{second // 60:02d}:{second % 60:02d}Z"}


def gps(client, courier, points):
    return client.post("/courier/location", json={"points": points}, headers=courier.headers)


def test_the_current_location_stays_at_the_newest_captured_at(dispatch_client, courier) -> None:
    empty = dispatch_client.get("/courier/location/current", headers=courier.headers)
    assert LocationCurrent.model_validate(empty.json).location is None
    first = gps(dispatch_client, courier, [point(s) for s in range(50)])
    assert first.status_code == 202
    assert LocationAccepted.model_validate(first.json).accepted == 50
    late = gps(dispatch_client, courier, [point(5, lat=40.3), point(3, lat=40.3), point(3, lat=40.3)])
    body = LocationAccepted.model_validate(late.json)
    assert (body.accepted, body.duplicates) == (0, 3)
    older = gps(dispatch_client, courier, [{**point(0), "capturedAt": "2026-11-22T09:00:00Z"}])
    assert older.json["accepted"] == 1 and older.json["current"]["capturedAt"] == "2026-11-22T10:00:49.000Z"
    current = dispatch_client.get("/courier/location/current", headers=courier.headers).json["location"]
    assert (current["lat"], current["capturedAt"]) == (40.18, "2026-11-22T10:00:49.000Z")


@pytest.mark.parametrize(
    ("points", "status"),
    [
        # The batch limit and the service area: 422 (docs/errors.md).
        ([], 422),
        ([point(s) for s in range(51)], 422),
        ([{**point(1), "lat": 38.79}], 422),
        ([{**point(1), "lon": 46.71}], 422),
        # A point that is invalid in itself: 400.
        ([{**point(1), "capturedAt": "2026-11-22T10:00:00"}], 400),
        ([{**point(1), "accuracyM": -1}], 400),
        ([{"lat": 40.1, "lon": 44.5}], 400),
    ],
)
def test_bad_batches_are_refused_and_store_nothing(dispatch_client, courier, points, status) -> None:
    response = gps(dispatch_client, courier, points)
    assert response.status_code == status and response.json["status"] == status
    assert dispatch_client.get("/courier/location/current", headers=courier.headers).json["location"] is None


def test_a_batch_of_exactly_50_points_on_the_service_area_edges_is_accepted(dispatch_client, courier) -> None:
    points = [point(s) for s in range(48)] + [
        {"lat": 38.8, "lon": 43.4, "capturedAt": "2026-11-22T11:00:00Z"},
        {"lat": 41.4, "lon": 46.7, "capturedAt": "2026-11-22T11:00:01Z"},
    ]
    assert gps(dispatch_client, courier, points).status_code == 202


def test_the_courier_profile_shows_shift_and_latest_location(dispatch_client, courier) -> None:
    gps(dispatch_client, courier, [point(1)])
    dispatch_client.post("/courier/shift/start", headers=courier.headers)
    body = CourierEnvelope.model_validate(dispatch_client.get("/courier/me", headers=courier.headers).json)
    assert body.courier.shift is not None and body.courier.location is not None and body.courier.online


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"photoUrl": "https://cdn.example.am/me.jpg"}, 200),
        ({"photoUrl": None, "phone": None, "vehicleLabel": None}, 200),
        ({"displayName": "Aram K"}, 200),
        ({"photoUrl": "not a uri"}, 400),
        ({"preferredLanguage": None}, 400),
        ({"onboardingCompleted": "yes"}, 400),
        ({"displayName": ""}, 400),
        ({}, 400),
        ({"preferredLanguage": "de"}, 400),
        ({"preferredLanguage": "ru", "onboardingCompleted": True}, 200),
    ],
)
def test_the_courier_edits_the_own_profile_within_limits(dispatch_client, courier, change, status) -> None:
    response = dispatch_client.patch("/courier/me", json=change, headers=courier.headers)
    assert response.status_code == status
    if status == 200:
        body = CourierEnvelope.model_validate(response.json).model_dump()["courier"]
        assert all(body[k] == v for k, v in change.items())


def test_the_courier_sees_the_own_open_orders_in_run_order(dispatch_client, dispatcher, courier) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier)
    second = assigned_order(dispatch_client, dispatcher, courier)
    done = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, done["id"], status="failed", failureReason="wrong_address")
    Order.update(sequence=1).where(Order.id == int(second["id"])).execute()
    Order.update(sequence=2).where(Order.id == int(first["id"])).execute()
    listed = CourierOrders.model_validate(
        dispatch_client.get("/courier/orders", headers=courier.headers).json
    )
    assert [o.id for o in listed.orders] == [second["id"], first["id"]]


def test_a_stop_planned_for_tomorrow_is_listed_only_once_the_couriers_shift_of_that_day_starts(
    dispatch_client, dispatcher, courier
) -> None:
    evening = datetime(2026, 11, 27, 19, 0, tzinfo=clock.YEREVAN)
    clock.freeze(evening)
    opens = datetime(2026, 11, 28, 10, 0, tzinfo=clock.YEREVAN)
    window = {
        "deliveryWindowStart": opens.isoformat(),
        "deliveryWindowEnd": (opens.replace(hour=13)).isoformat(),
    }
    today = assigned_order(dispatch_client, dispatcher, courier)
    tomorrow = assigned_order(dispatch_client, dispatcher, courier, **window)
    carried = assigned_order(dispatch_client, dispatcher, courier, **window)
    assert courier_status(dispatch_client, courier, carried["id"], status="picked_up").status_code == 200

    def listed() -> list[str]:
        answer = dispatch_client.get("/courier/orders", headers=courier.headers)
        return [o.id for o in CourierOrders.model_validate(answer.json).orders]

    assert listed() == [today["id"], carried["id"]]  # a picked-up order is carried: always listed
    clock.freeze(opens.replace(hour=8, minute=30))
    assert dispatch_client.post("/courier/shift/start", headers=courier.headers).status_code == 201
    assert listed() == [today["id"], tomorrow["id"], carried["id"]]


def test_a_status_answer_is_the_documented_record(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=6000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    answer = courier_status(
        dispatch_client, courier, order["id"], status="delivered", recipientName="Ani", notes="left at door"
    )
    result = StatusResult.model_validate(answer.json)
    assert result.replayed is False and result.order.proof is not None
    assert (result.order.proof.recipientName, result.order.proof.method) == ("Ani", "name")
    assert result.order.lastAttempt is not None and result.order.lastAttempt.collectedAmountAmd == 6000


def _code(dispatch_app, order_id: str) -> str:
    row = Order.get_by_id(int(order_id))
    return codes.decrypt_code(dispatch_app.extensions["dispatch"].master_key, row.public_id, row.otp_cipher)


def test_verifying_a_code(dispatch_app, dispatch_client, company, dispatcher, courier) -> None:
    plain = assigned_order(dispatch_client, dispatcher, courier)
    coded = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True)

    def verify(order_id, code, who=courier):
        return dispatch_client.post(
            f"/courier/orders/{order_id}/otp/verify", json={"code": code}, headers=who.headers
        )

    assert OtpResult.model_validate(verify(plain["id"], "123456").json) == OtpResult(
        required=False, valid=True
    )
    right = _code(dispatch_app, coded["id"])
    assert verify(coded["id"], right).json == {"required": True, "valid": True}
    assert verify(coded["id"], "x").status_code == 422
    assert verify(coded["id"], "").status_code == 400
    assert verify(coded["id"], "1" * 33).status_code == 400
    other = make_member(dispatch_app, company, "courier")
    assert verify(coded["id"], right, other).status_code == 404
    assert verify(2**64, right).status_code == 404
    assert Order.get_by_id(int(coded["id"])).otp_attempts == 1  # a right code spends nothing


class DownStore:
    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise StorageUnavailable("down")

        return fail


def test_a_proof_upload_link(dispatch_app, dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/courier/orders/{order['id']}/proof/upload-url"
    link = UploadUrl.model_validate(
        dispatch_client.post(path, json={"contentType": "image/png"}, headers=courier.headers).json
    )
    assert link.key.startswith(f"{courier.courier.company_id}/proofs/{order['id']}/")
    assert (
        dispatch_client.post(path, json={"contentType": "text/plain"}, headers=courier.headers).status_code
        == 415
    )
    assert dispatch_client.post(path, json={}, headers=courier.headers).status_code == 400
    dispatch_app.extensions["dispatch"].objects = DownStore()
    assert (
        dispatch_client.post(path, json={"contentType": "image/png"}, headers=courier.headers).status_code
        == 503
    )


def test_the_cash_summary_and_a_handover(dispatch_client, dispatcher, courier) -> None:
    empty = CashSummary.model_validate(dispatch_client.get("/courier/cash", headers=courier.headers).json)
    assert (empty.outstandingAmd, empty.openSettlement, empty.recentCollections) == (0, None, [])
    order = assigned_order(
        dispatch_client, dispatcher, courier, isCod=True, amountAmd=9000, codAmountAmd=8500
    )
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(dispatch_client, courier, order["id"], status="delivered")
    settled = SettlementEnvelope.model_validate(
        dispatch_client.post("/courier/cash/settle", headers=courier.headers).json
    )
    assert settled.settlement.expectedAmd == 8500 and settled.settlement.orders[0].orderId == order["id"]
    summary = CashSummary.model_validate(dispatch_client.get("/courier/cash", headers=courier.headers).json)
    assert summary.outstandingAmd == 8500 and summary.openSettlement is not None
    assert summary.recentCollections[0].settled is True


def test_history_lists_every_attempt_newest_first_within_the_limit(
    dispatch_client, dispatcher, courier
) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, first["id"], status="failed", failureReason="refused")
    dispatch_client.post(
        f"/orders/{first['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    dispatch_client.post(
        f"/orders/{first['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    courier_status(dispatch_client, courier, first["id"], status="picked_up")
    courier_status(dispatch_client, courier, first["id"], status="delivered")
    history = History.model_validate(dispatch_client.get("/courier/history", headers=courier.headers).json)
    assert [(h.status, h.attempt) for h in history.history] == [("delivered", 2), ("failed", 1)]
    one = dispatch_client.get("/courier/history?limit=1", headers=courier.headers).json["history"]
    assert len(one) == 1 and one[0]["status"] == "delivered"
    for bad in ("0", "201", "x"):
        assert (
            dispatch_client.get(f"/courier/history?limit={bad}", headers=courier.headers).status_code == 400
        )


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/courier/location"),
        ("get", "/courier/location/current"),
        ("get", "/courier/me"),
        ("patch", "/courier/me"),
        ("post", "/courier/shift/start"),
        ("post", "/courier/shift/break"),
        ("post", "/courier/shift/end"),
        ("get", "/courier/orders"),
        ("post", "/courier/orders/1/status"),
        ("post", "/courier/orders/1/otp/verify"),
        ("post", "/courier/orders/1/proof/upload-url"),
        ("get", "/courier/cash"),
        ("post", "/courier/cash/settle"),
        ("get", "/courier/earnings"),
        ("get", "/courier/history"),
    ],
)
def test_dispatchers_get_403_on_every_courier_app_route(dispatch_client, dispatcher, method, path) -> None:
    assert getattr(dispatch_client, method)(path, json={}, headers=dispatcher.headers).status_code == 403


def test_values_at_the_limits_of_section_8_are_accepted(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True)
    courier_status(dispatch_client, courier, order["id"], status="picked_up", idempotencyKey="k" * 8)
    answer = courier_status(
        dispatch_client,
        courier,
        order["id"],
        status="delivered",
        recipientName="r" * 200,
        notes="n" * 1000,
        otpCode=_code(dispatch_app, order["id"]),
        idempotencyKey="k" * 128,
        otpVerified=True,
    )
    assert answer.status_code == 200, answer.json
    assert answer.json["order"]["proof"]["notes"] == "n" * 1000
    history = dispatch_client.get("/courier/history?limit=200", headers=courier.headers)
    assert history.status_code == 200 and len(history.json["history"]) == 1
