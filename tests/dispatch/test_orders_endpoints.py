"""Every row of the Orders table not covered elsewhere: detail, edits, the audit trail, proof photo
links (404 without a photo, 503 without storage), ids that cannot name a row, role checks; each
answer checked against its documented response model."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from appliance.common.objects import StorageUnavailable
from appliance.dispatch.models import Order
from appliance.dispatch.orders import codes
from appliance.dispatch.orders.schemas import AssignResult, OrderEnvelope, OrderEvents, PhotoUrl
from tests.dispatch.orders_helpers import ORDER, assigned_order, courier_status, create_order, ready_order


class DownStore:
    """An object store whose every call fails as an unreachable one would."""

    lifetime_seconds = 300

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise StorageUnavailable("down")

        return fail


def test_an_order_detail_is_the_full_record(dispatch_client, dispatcher) -> None:
    order = create_order(
        dispatch_client,
        dispatcher,
        isCod=True,
        codAmountAmd=4500,
        otpRequired=True,
        weightKg=1.5,
        addressLabelEn="Abovyan 10",
        deliveryWindowStart="2026-11-22T10:00:00+04:00",
        deliveryWindowEnd="2026-11-22T12:00:00+04:00",
    )
    response = dispatch_client.get(f"/orders/{order['id']}", headers=dispatcher.headers)
    assert response.status_code == 200
    body = OrderEnvelope.model_validate(response.json).order
    assert body.codAmountAmd == 4500 and body.otpRequired is True and body.weightKg == 1.5
    assert body.deliveryWindowStart == "2026-11-22T06:00:00.000Z"
    assert "otpCode" not in response.json["order"] and "otp_hash" not in response.json["order"]


def test_a_delivery_code_is_generated_hashed_and_encrypted(dispatch_app, dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher, otpRequired=True)
    row = Order.get_by_id(int(order["id"]))
    key = dispatch_app.extensions["dispatch"].master_key
    code = codes.decrypt_code(key, row.public_id, row.otp_cipher)
    assert len(code) == 6 and code.isdigit()
    assert row.otp_hash != code and codes.matches(key, row.public_id, row.otp_hash, code)


@pytest.mark.parametrize(
    ("change", "check"),
    [
        ({"recipientName": "Ani"}, lambda o: o["recipientName"] == "Ani"),
        ({"pin": {"lat": 40.2, "lon": 44.6}}, lambda o: o["pin"] == {"lat": 40.2, "lon": 44.6}),
        ({"isCod": True}, lambda o: o["isCod"] and o["codAmountAmd"] == 5000),
        ({"weightKg": 0}, lambda o: o["weightKg"] == 0),
        ({"deliveryWindowEnd": "2026-11-22T20:00:00Z"}, lambda o: o["deliveryWindowEnd"].startswith("2026")),
        ({"addressLabelRu": None}, lambda o: o["addressLabelRu"] is None),
    ],
)
def test_a_draft_or_ready_order_is_edited(dispatch_client, dispatcher, change, check) -> None:
    order = ready_order(dispatch_client, dispatcher)
    response = dispatch_client.patch(f"/orders/{order['id']}", json=change, headers=dispatcher.headers)
    assert response.status_code == 200, response.json
    assert check(OrderEnvelope.model_validate(response.json).model_dump()["order"])


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"pin": {"lat": 42.0, "lon": 44.5}}, 422),
        ({"recipientName": None}, 400),
        ({"recipientPhone": "1"}, 400),
        ({"addressLabelHy": "x" * 501}, 400),
        ({"deliveryWindowStart": "2026-11-22T10:00:00"}, 400),  # no offset
        ({"deliveryWindowStart": "1900-01-01T00:00:00Z"}, 400),
        ({"amountAmd": 1.5}, 400),
    ],
)
def test_bad_edits_are_refused_and_change_nothing(dispatch_client, dispatcher, change, status) -> None:
    order = create_order(dispatch_client, dispatcher)
    response = dispatch_client.patch(f"/orders/{order['id']}", json=change, headers=dispatcher.headers)
    assert response.status_code == status and response.json["status"] == status
    assert dispatch_client.get(f"/orders/{order['id']}", headers=dispatcher.headers).json["order"] == order


def test_the_audit_trail_lists_every_change_oldest_first(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    response = dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers)
    events = OrderEvents.model_validate(response.json).events
    assert [(e.kind, e.toStatus) for e in events] == [
        ("created", "draft"),
        ("status_changed", "ready"),
        ("status_changed", "assigned"),
        ("assigned", None),
        ("status_changed", "picked_up"),
    ]
    assert events[-1].actorUserId == str(courier.user.id)
    assert events[3].data["courierId"] == str(courier.courier.id)


def test_a_proof_photo_is_read_back_only_through_a_short_lived_signed_link(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    path = f"/orders/{order['id']}/proof/photo-url"
    assert dispatch_client.get(path, headers=dispatcher.headers).status_code == 404
    upload = dispatch_client.post(
        f"/courier/orders/{order['id']}/proof/upload-url",
        json={"contentType": "image/webp"},
        headers=courier.headers,
    ).json
    put = urlsplit(upload["url"])
    dispatch_client.put(f"{put.path}?{put.query}", data=b"webp-bytes", content_type="image/webp")
    courier_status(dispatch_client, courier, order["id"], status="delivered", photoKey=upload["key"])
    link = PhotoUrl.model_validate(dispatch_client.get(path, headers=dispatcher.headers).json)
    assert 0 < link.expiresIn <= 3600
    get = urlsplit(link.url)
    assert dispatch_client.get(f"{get.path}?{get.query}").data == b"webp-bytes"
    assert dispatch_client.get(get.path).status_code in (403, 404)  # never public
    assert dispatch_client.get(path, headers=courier.headers).status_code == 403
    dispatch_app.extensions["dispatch"].objects = DownStore()
    down = dispatch_client.get(path, headers=dispatcher.headers)
    assert down.status_code == 503 and down.json["status"] == 503


def test_a_photo_key_of_another_order_is_refused(dispatch_client, dispatcher, courier) -> None:
    first = assigned_order(dispatch_client, dispatcher, courier)
    second = assigned_order(dispatch_client, dispatcher, courier)
    key = dispatch_client.post(
        f"/courier/orders/{first['id']}/proof/upload-url",
        json={"contentType": "image/png"},
        headers=courier.headers,
    ).json["key"]
    courier_status(dispatch_client, courier, second["id"], status="picked_up")
    refused = courier_status(dispatch_client, courier, second["id"], status="delivered", photoKey=key)
    assert refused.status_code == 422


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/orders/{big}"),
        ("patch", "/orders/{big}"),
        ("get", "/orders/{big}/events"),
        ("get", "/orders/{big}/proof/photo-url"),
        ("post", "/orders/{big}/status"),
        ("post", "/orders/{big}/assign"),
        ("get", "/orders/0"),
        ("get", "/orders/abc"),
        ("get", "/orders/-3"),
    ],
)
def test_ids_that_cannot_name_an_order_are_404(dispatch_client, dispatcher, courier, method, path) -> None:
    body = {"status": "ready", "courierId": courier.courier.id, "weightKg": 1}
    response = getattr(dispatch_client, method)(path.format(big=2**64), json=body, headers=dispatcher.headers)
    assert response.status_code == 404 and response.json["status"] == 404


def test_assigning_to_an_inactive_or_unknown_courier_is_404(dispatch_client, dispatcher, courier) -> None:
    order = ready_order(dispatch_client, dispatcher)
    dispatch_client.patch(
        f"/couriers/{courier.courier.id}", json={"active": False}, headers=dispatcher.headers
    )
    for courier_id in (courier.courier.id, 2**64):
        response = dispatch_client.post(
            f"/orders/{order['id']}/assign", json={"courierId": courier_id}, headers=dispatcher.headers
        )
        assert response.status_code == 404
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/assign",
            json={"courierId": str(courier.courier.id)},
            headers=dispatcher.headers,
        ).status_code
        == 400
    )


def test_an_assignment_answer_is_documented(dispatch_client, dispatcher, courier) -> None:
    order = ready_order(dispatch_client, dispatcher)
    response = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    result = AssignResult.model_validate(response.json)
    assert result.assignment.status == "active" and result.order.courierId == str(courier.courier.id)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/orders/{id}"),
        ("patch", "/orders/{id}"),
        ("get", "/orders/{id}/events"),
        ("post", "/orders/{id}/status"),
        ("post", "/orders/{id}/assign"),
    ],
)
def test_couriers_get_403_on_every_dispatcher_order_route(
    dispatch_client, dispatcher, courier, method, path
) -> None:
    order = create_order(dispatch_client, dispatcher)
    response = getattr(dispatch_client, method)(
        path.format(id=order["id"]), json={"status": "ready"}, headers=courier.headers
    )
    assert response.status_code == 403


def test_an_order_without_a_token_is_401(dispatch_client) -> None:
    assert dispatch_client.post("/orders", json=ORDER).status_code == 401


def test_every_orders_couriers_courier_app_and_cash_answer_is_documented(dispatch_client) -> None:
    document = dispatch_client.get("/openapi.json").json
    mine = ("/orders", "/couriers", "/courier/", "/cash/")
    others = ("/eta", "/tracking", "/notify-late")
    checked = 0
    for path, operations in document["paths"].items():
        if not path.startswith(mine) or path.endswith(others):
            continue
        for method, operation in operations.items():
            success = [code for code in operation["responses"] if code.startswith("2")]
            assert success, (method, path)
            assert "content" in operation["responses"][success[0]], (method, path)
            checked += 1
    assert checked >= 30
