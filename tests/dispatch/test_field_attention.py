"""Nothing collected is lost (issue 28, item 2): a queued move the server refused is reported by the
courier's app, flags the order "needs attention" for the dispatcher with the cash the courier holds,
counts that cash as the courier's, and is cleared once the order moves on."""

from __future__ import annotations

from appliance.dispatch.models import Order, OrderEvent
from appliance.dispatch.orders import codes
from tests.dispatch.orders_helpers import assigned_order, courier_status


def _code(dispatch_app, order_id: str) -> str:
    order = Order.get_by_id(int(order_id))
    return codes.decrypt_code(
        dispatch_app.extensions["dispatch"].master_key, order.public_id, order.otp_cipher
    )


def _refused_delivery(dispatch_client, dispatcher, courier) -> dict:
    order = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True, isCod=True, amountAmd=6000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    wrong = courier_status(
        dispatch_client, courier, order["id"], status="delivered", otpCode="000000", collectedAmountAmd=6000
    )
    assert wrong.status_code == 422
    return order


def test_a_refused_delivery_reported_by_the_app_flags_the_order_with_the_cash_held(
    dispatch_client, dispatcher, courier
) -> None:
    order = _refused_delivery(dispatch_client, dispatcher, courier)
    report = {"move": "delivered", "reason": "Wrong code.", "heldAmountAmd": 6000}
    answer = dispatch_client.post(
        f"/courier/orders/{order['id']}/attention", json=report, headers=courier.headers
    )
    assert answer.status_code == 200, answer.json
    flag = answer.json["order"]["needsAttention"]
    assert flag["reason"] == "Wrong code." and flag["move"] == "delivered" and flag["heldAmountAmd"] == 6000
    seen = dispatch_client.get(f"/orders/{order['id']}", headers=dispatcher.headers).json["order"]
    assert seen["needsAttention"]["heldAmountAmd"] == 6000
    listed = dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    assert [o["needsAttention"]["reason"] for o in listed if o["id"] == order["id"]] == ["Wrong code."]
    cash = dispatch_client.get("/courier/cash", headers=courier.headers).json
    assert cash["unrecordedAmd"] == 6000 and cash["outstandingAmd"] == 0
    # The app repeats a report it did not hear back about: the audit trail has it once.
    dispatch_client.post(f"/courier/orders/{order['id']}/attention", json=report, headers=courier.headers)
    flagged = OrderEvent.select().where(
        (OrderEvent.order == int(order["id"])) & (OrderEvent.kind == "needs_attention")
    )
    assert flagged.count() == 1


def test_the_right_code_resolves_the_flag_and_records_the_cash(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = _refused_delivery(dispatch_client, dispatcher, courier)
    dispatch_client.post(
        f"/courier/orders/{order['id']}/attention",
        json={"move": "delivered", "reason": "Wrong code.", "heldAmountAmd": 6000},
        headers=courier.headers,
    )
    right = courier_status(
        dispatch_client,
        courier,
        order["id"],
        status="delivered",
        otpCode=_code(dispatch_app, order["id"]),
        collectedAmountAmd=6000,
    )
    assert right.status_code == 200, right.json
    assert right.json["order"]["needsAttention"] is None
    cash = dispatch_client.get("/courier/cash", headers=courier.headers).json
    assert cash["unrecordedAmd"] == 0 and cash["outstandingAmd"] == 6000


def test_a_report_on_an_order_that_moved_on_is_refused_and_bad_reports_are_problems(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/courier/orders/{order['id']}/attention"
    blank = dispatch_client.post(path, json={"move": "delivered", "reason": " "}, headers=courier.headers)
    assert blank.status_code in (400, 422) and blank.content_type == "application/problem+json"
    negative = {"move": "delivered", "reason": "x", "heldAmountAmd": -1}
    assert dispatch_client.post(path, json=negative, headers=courier.headers).status_code in (400, 422)
    dispatch_client.post(
        f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    gone = dispatch_client.post(path, json={"move": "picked_up", "reason": "x"}, headers=courier.headers)
    assert gone.status_code == 404  # no longer the courier's order
    assert (
        dispatch_client.post(
            "/courier/orders/999999/attention",
            json={"move": "failed", "reason": "x"},
            headers=courier.headers,
        ).status_code
        == 404
    )


def test_the_courier_app_learns_the_number_to_call_the_dispatcher_on(
    dispatch_client, company, courier
) -> None:
    assert dispatch_client.get("/courier/me", headers=courier.headers).json["dispatchPhone"] is None
    company.support_phone = "+37410999999"
    company.save()
    assert dispatch_client.get("/courier/me", headers=courier.headers).json["dispatchPhone"] == "+37410999999"
    company.phone = "+37410123456"
    company.save()
    me = dispatch_client.get("/courier/me", headers=courier.headers).json
    assert me["dispatchPhone"] == "+37410123456" and me["courier"]["id"] == str(courier.courier.id)
