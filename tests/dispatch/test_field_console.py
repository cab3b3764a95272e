"""The console in the field (issue 28, item 3), its rules through the API: the tracking link in
force is shown without issuing a new one."""

from __future__ import annotations

from appliance.dispatch.models import Order, TrackingLink
from appliance.dispatch.orders import codes
from tests.dispatch.orders_helpers import assigned_order


def test_the_link_in_force_is_shown_without_ending_it_and_kept_encrypted(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/orders/{order['id']}/tracking"
    assert dispatch_client.get(path, headers=dispatcher.headers).json == {"link": None}
    issued = dispatch_client.post(path, json={}, headers=dispatcher.headers).json
    for _ in range(2):  # looking twice ends nothing
        shown = dispatch_client.get(path, headers=dispatcher.headers)
        assert shown.status_code == 200
        assert shown.json["link"]["path"] == issued["path"]
        assert shown.json["link"]["url"].endswith(issued["path"])
        assert shown.json["link"]["expiresAt"] == issued["expiresAt"]
    assert dispatch_client.get(f"/track/{issued['token']}").status_code == 200
    stored = TrackingLink.get(TrackingLink.order == int(order["id"]))
    assert issued["token"].encode() not in bytes(stored.token_cipher)
    # Issuing a new one is what ends the old one; the new one is then in force.
    fresh = dispatch_client.post(path, json={}, headers=dispatcher.headers).json
    assert dispatch_client.get(f"/track/{issued['token']}").status_code == 404
    assert dispatch_client.get(path, headers=dispatcher.headers).json["link"]["path"] == fresh["path"]


def test_a_link_issued_before_tokens_were_kept_is_reported_without_its_address(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/orders/{order['id']}/tracking"
    dispatch_client.post(path, json={}, headers=dispatcher.headers)
    TrackingLink.update(token_cipher=None).execute()
    link = dispatch_client.get(path, headers=dispatcher.headers).json["link"]
    assert link["path"] is None and link["url"] is None and link["expiresAt"]
    assert dispatch_client.get("/orders/999999/tracking", headers=dispatcher.headers).status_code == 404


def _picked_up(dispatch_client, dispatcher, courier, **fields) -> dict:
    order = assigned_order(dispatch_client, dispatcher, courier, **fields)
    moved = dispatch_client.post(
        f"/courier/orders/{order['id']}/status", json={"status": "picked_up"}, headers=courier.headers
    )
    assert moved.status_code == 200
    return order


def _code(dispatch_app, order_id: str) -> str:
    order = Order.get_by_id(int(order_id))
    return codes.decrypt_code(
        dispatch_app.extensions["dispatch"].master_key, order.public_id, order.otp_cipher
    )


def test_a_dispatcher_records_a_delivery_for_the_courier_with_the_code_and_the_cash_is_the_courier_s(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = _picked_up(dispatch_client, dispatcher, courier, otpRequired=True, isCod=True, amountAmd=4500)
    path = f"/orders/{order['id']}/deliver-for-courier"
    neither = dispatch_client.post(path, json={}, headers=dispatcher.headers)
    assert neither.status_code == 422 and neither.content_type == "application/problem+json"
    wrong = dispatch_client.post(path, json={"otpCode": "000000"}, headers=dispatcher.headers)
    assert wrong.status_code == 422
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0  # the courier's budget is the app's
    done = dispatch_client.post(
        path, json={"otpCode": _code(dispatch_app, order["id"])}, headers=dispatcher.headers
    )
    assert done.status_code == 200, done.json
    body = done.json["order"]
    assert body["status"] == "delivered" and body["proof"]["method"] == "code"
    assert body["collectedAmountAmd"] == 4500
    assert dispatch_client.get("/courier/cash", headers=courier.headers).json["outstandingAmd"] == 4500
    assert (
        dispatch_client.post(path, json={"recipientName": "x"}, headers=dispatcher.headers).status_code == 409
    )
    history = dispatch_client.get("/courier/history", headers=courier.headers).json["history"]
    assert [h["publicId"] for h in history] == [order["publicId"]]
    steps = dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json["events"]
    delivered = next(e for e in steps if e["toStatus"] == "delivered")
    assert delivered["actorName"] == dispatcher.user.display_name and delivered["actorRole"] == "dispatcher"
    assert delivered["onBehalfOf"] == {
        "courierId": str(courier.courier.id),
        "name": courier.courier.display_name,
    }


def test_a_delivery_for_the_courier_by_the_recipient_s_name_needs_an_order_on_its_way(
    dispatch_client, dispatcher, courier
) -> None:
    assigned = assigned_order(dispatch_client, dispatcher, courier)
    early = dispatch_client.post(
        f"/orders/{assigned['id']}/deliver-for-courier",
        json={"recipientName": "Gayane"},
        headers=dispatcher.headers,
    )
    assert early.status_code == 409
    order = _picked_up(dispatch_client, dispatcher, courier)
    done = dispatch_client.post(
        f"/orders/{order['id']}/deliver-for-courier",
        json={"recipientName": "Gayane", "notes": "courier's phone died"},
        headers=dispatcher.headers,
    )
    assert done.status_code == 200
    assert done.json["order"]["proof"] == {
        "recipientName": "Gayane",
        "hasPhoto": False,
        "notes": "courier's phone died",
        "method": "name",
        "hasSignature": False,
        "scannedCode": None,
        "ageChecked": None,
    }


def test_every_step_of_the_history_names_the_person_and_their_role(
    dispatch_client, dispatcher, courier
) -> None:
    order = _picked_up(dispatch_client, dispatcher, courier)
    dispatch_client.post(
        f"/orders/{order['id']}/status",
        json={"status": "failed", "reason": "refused"},
        headers=dispatcher.headers,
    )
    steps = dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json["events"]
    who = [(e["kind"], e["toStatus"], e["actorName"], e["actorRole"]) for e in steps]
    dispatcher_name, courier_name = dispatcher.user.display_name, courier.user.display_name
    assert ("created", "draft", dispatcher_name, "dispatcher") in who
    assert ("assigned", None, dispatcher_name, "dispatcher") in who
    assert ("status_changed", "picked_up", courier_name, "courier") in who
    assert ("status_changed", "failed", dispatcher_name, "dispatcher") in who
    assert all(name for _, _, name, _ in who)
