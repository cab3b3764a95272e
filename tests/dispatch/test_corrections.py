"""Corrections from a review against the specification (issue 17): each test failed before its fix."""

from __future__ import annotations

import pytest

from appliance.dispatch.models import Courier, Membership, Order
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order


@pytest.fixture
def team(dispatch_app):
    company = make_company("Arev")
    return (
        dispatch_app.test_client(),
        make_member(dispatch_app, company, "owner"),
        make_member(dispatch_app, company, "courier"),
    )


def _courier_can_work(client, courier) -> bool:
    return client.get("/courier/me", headers=courier.headers).status_code == 200


def test_disabling_a_couriers_membership_makes_the_courier_inactive_and_frees_their_assigned_orders(
    team,
) -> None:
    client, owner, courier = team
    waiting = assigned_order(client, owner, courier)
    carried = assigned_order(client, owner, courier)
    assert courier_status(client, courier, carried["id"], status="picked_up").status_code == 200
    response = client.patch(
        f"/company/members/{courier.user.id}", json={"status": "disabled"}, headers=owner.headers
    )
    assert response.status_code == 200
    assert Courier.get_by_id(courier.courier.id).active is False
    assert Order.get_by_id(int(waiting["id"])).status == "ready"  # back in the pool
    assert Order.get_by_id(int(carried["id"])).status == "picked_up"  # the parcel is with the courier
    order = ready_order(client, owner)
    refused = client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=owner.headers
    )
    assert refused.status_code == 404
    assert not _courier_can_work(client, courier)


def test_deactivating_a_courier_ends_their_sessions_and_sign_in_and_reactivating_restores_both(team) -> None:
    client, owner, courier = team
    waiting = assigned_order(client, owner, courier)
    response = client.patch(f"/couriers/{courier.courier.id}", json={"active": False}, headers=owner.headers)
    assert response.status_code == 200 and response.json["courier"]["active"] is False
    assert not _courier_can_work(client, courier)
    membership = Membership.get(
        (Membership.user == courier.user.id) & (Membership.company == owner.membership.company_id)
    )
    assert membership.status == "disabled"
    assert Order.get_by_id(int(waiting["id"])).status == "ready"
    members = client.get("/company/members", headers=owner.headers).json
    assert any(m["status"] == "disabled" for m in members["members"] if m["userId"] == str(courier.user.id))
    back = client.patch(f"/couriers/{courier.courier.id}", json={"active": True}, headers=owner.headers)
    assert back.status_code == 200
    assert Membership.get_by_id(membership.id).status == "active"


def test_a_retried_order_gets_a_fresh_delivery_code_and_budget(team, dispatch_app) -> None:
    client, owner, courier = team
    order = assigned_order(client, owner, courier, otpRequired=True)
    courier_status(client, courier, order["id"], status="picked_up")
    for _ in range(10):
        courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    locked = courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    assert locked.status_code == 423
    assert (
        courier_status(client, courier, order["id"], status="failed", failureReason="refused").status_code
        == 200
    )
    retry = client.post(f"/orders/{order['id']}/status", json={"status": "ready"}, headers=owner.headers)
    assert retry.status_code == 200
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0
    client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=owner.headers
    )
    courier_status(client, courier, order["id"], status="picked_up")
    wrong = courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    assert wrong.status_code == 422  # a wrong code again, not locked


def test_a_dispatcher_can_reset_a_locked_delivery_code(team) -> None:
    client, owner, courier = team
    order = assigned_order(client, owner, courier, otpRequired=True)
    courier_status(client, courier, order["id"], status="picked_up")
    for _ in range(11):
        courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    reset = client.post(f"/orders/{order['id']}/delivery-code/reset", headers=owner.headers)
    assert reset.status_code == 200
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0
    events = client.get(f"/orders/{order['id']}/events", headers=owner.headers).json["events"]
    assert "delivery_code_reset" in [e["kind"] for e in events]
    plain = create_order(client, owner)
    assert client.post(f"/orders/{plain['id']}/delivery-code/reset", headers=owner.headers).status_code == 409
    assert (
        client.post(f"/orders/{order['id']}/delivery-code/reset", headers=courier.headers).status_code == 403
    )


def test_a_dispatcher_fails_an_order_without_a_reason_or_with_one_recorded_as_given(team) -> None:
    client, owner, courier = team
    silent = assigned_order(client, owner, courier)
    courier_status(client, courier, silent["id"], status="picked_up")
    response = client.post(f"/orders/{silent['id']}/status", json={"status": "failed"}, headers=owner.headers)
    assert response.status_code == 200 and response.json["order"]["status"] == "failed"
    coded = assigned_order(client, owner, courier)
    courier_status(client, courier, coded["id"], status="picked_up")
    response = client.post(
        f"/orders/{coded['id']}/status",
        json={"status": "failed", "reason": "wrong_address"},
        headers=owner.headers,
    )
    assert response.json["order"]["failureReason"] == "wrong_address"
    told = assigned_order(client, owner, courier)
    courier_status(client, courier, told["id"], status="picked_up")
    client.post(
        f"/orders/{told['id']}/status",
        json={"status": "failed", "reason": "the shop closed early"},
        headers=owner.headers,
    )
    events = client.get(f"/orders/{told['id']}/events", headers=owner.headers).json["events"]
    failed = [e for e in events if e.get("toStatus") == "failed"][-1]
    assert failed["data"]["reason"] == "the shop closed early"
