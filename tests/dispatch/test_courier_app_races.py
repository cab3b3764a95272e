"""Races in the courier app: two threads at once, one winner, nothing counted twice.

The test databases are files, so the two threads really use two connections and SQLite's
BEGIN IMMEDIATE decides who goes first."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from appliance.dispatch.models import Collection, CourierLocation, Order, Shift, StatusRequest
from appliance.dispatch.orders import codes
from tests.dispatch.orders_helpers import assigned_order, courier_status


def at_once(app, call: Callable[[Any], Any], n: int = 2) -> list[Any]:
    """Run ``call(client)`` in ``n`` threads released together; their answers."""
    barrier = threading.Barrier(n)
    results: list[Any] = []
    lock = threading.Lock()

    def run() -> None:
        client = app.test_client()
        barrier.wait()
        answer = call(client)
        with lock:
            results.append(answer)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_deliveries_of_one_order_at_once_collect_the_cash_once(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=8000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    answers = at_once(
        dispatch_app,
        lambda c: (
            c.post(
                f"/courier/orders/{order['id']}/status", json={"status": "delivered"}, headers=courier.headers
            ).status_code
        ),
    )
    assert sorted(answers) == [200, 409]
    assert [c.amount_amd for c in Collection.select()] == [8000]


def test_one_idempotency_key_sent_twice_at_once_applies_once_and_replays_once(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=8000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    answers = at_once(
        dispatch_app,
        lambda c: c.post(
            f"/courier/orders/{order['id']}/status",
            json={"status": "delivered", "idempotencyKey": "deliver-once-1"},
            headers=courier.headers,
        ),
    )
    assert [a.status_code for a in answers] == [200, 200]
    assert sorted(a.json["replayed"] for a in answers) == [False, True]
    assert answers[0].json["order"] == answers[1].json["order"]
    assert Collection.select().count() == 1 and StatusRequest.select().count() == 1


def test_two_shift_starts_at_once_open_one_shift(dispatch_app, courier) -> None:
    answers = at_once(
        dispatch_app, lambda c: c.post("/courier/shift/start", headers=courier.headers).status_code
    )
    assert sorted(answers) == [201, 409]
    assert Shift.select().where(Shift.courier == courier.courier.id).count() == 1


def test_one_gps_batch_sent_twice_at_once_is_stored_once(dispatch_app, courier) -> None:
    points = [
        {"lat": 40.18, "lon": 44.51, "capturedAt": f"2026-11-22T10:{i // 60:02d}:{i % 60:02d}Z"}
        for i in range(50)
    ]
    answers = at_once(
        dispatch_app,
        lambda c: c.post("/courier/location", json={"points": points}, headers=courier.headers).json,
        n=4,
    )
    assert sum(a["accepted"] for a in answers) == 50
    assert CourierLocation.select().count() == 50
    assert {a["current"]["capturedAt"] for a in answers} == {"2026-11-22T10:00:49.000Z"}


def test_two_wrong_codes_at_the_end_of_the_budget_lock_the_code_exactly_once(
    dispatch_app, dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, otpRequired=True)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    Order.update(otp_attempts=codes.MAX_ATTEMPTS - 1).where(Order.id == int(order["id"])).execute()
    answers = at_once(
        dispatch_app,
        lambda c: (
            c.post(
                f"/courier/orders/{order['id']}/otp/verify",
                json={"code": "wrong-code"},
                headers=courier.headers,
            ).status_code
        ),
    )
    assert sorted(answers) == [422, 423]
    assert Order.get_by_id(int(order["id"])).otp_attempts == codes.MAX_ATTEMPTS
