"""Recipient tracking: links, the view at every stage, privacy, ratings, late notices."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.models import Company
from appliance.dispatch.tracking.service import coarsen
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, assigned_order, courier_status, create_order

REQUIRED = {
    "company",
    "state",
    "stage",
    "timeline",
    "proof",
    "receipt",
    "rating",
    "failureReason",
    "stopsAhead",
    "otpCode",
    "courierName",
    "courierLine",
    "courierPhone",
    "courier",
    "courierUpdatedAt",
    "destination",
    "etaSeconds",
    "route",
    "expiresAt",
}


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def dispatcher(dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


@pytest.fixture
def courier(dispatch_app, company):
    member = make_member(dispatch_app, company, "courier", name="Narek Hovhannisyan")
    member.courier.phone = "+37499111222"
    member.courier.save()
    return member


def _link(client, dispatcher, order_id, **body):
    response = client.post(f"/orders/{order_id}/tracking", json=body, headers=dispatcher.headers)
    assert response.status_code == 201
    return response.json


def _view(client, token):
    response = client.get(f"/track/{token}")
    assert response.status_code == 200, response.data
    assert set(response.json) >= REQUIRED
    return response.json


def _gps(client, courier, lat=40.18231, lon=44.51678):
    client.post(
        "/courier/location",
        json={"points": [{"lat": lat, "lon": lon, "capturedAt": "2026-11-22T10:00:00Z"}]},
        headers=courier.headers,
    )


def test_a_link_is_issued_once_and_a_new_one_revokes_the_old(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    first = _link(dispatch_client, dispatcher, order["id"])
    assert first["path"] == f"/t/{first['token']}" and len(first["token"]) >= 22
    assert _view(dispatch_client, first["token"])["stage"] == "created"
    second = _link(dispatch_client, dispatcher, order["id"], ttlHours=1)
    assert dispatch_client.get(f"/track/{first['token']}").status_code == 404
    assert _view(dispatch_client, second["token"])["state"] == "preparing"


def test_unknown_expired_and_revoked_links_answer_the_same_bytes(dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    revoked = _link(dispatch_client, dispatcher, order["id"])["token"]
    expired = _link(dispatch_client, dispatcher, order["id"], ttlHours=1)["token"]
    clock.advance(timedelta(hours=1, seconds=1))
    answers = [dispatch_client.get(f"/track/{t}") for t in (revoked, expired, "u" * 32, "short", "x" * 201)]
    assert {a.status_code for a in answers} == {404}
    assert len({a.data for a in answers}) == 1


@pytest.mark.parametrize("ttl", [0, 721, "12"])
def test_bad_ttls_are_400(dispatch_client, dispatcher, ttl) -> None:
    order = create_order(dispatch_client, dispatcher)
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/tracking", json={"ttlHours": ttl}, headers=dispatcher.headers
        ).status_code
        == 400
    )


def test_another_companys_order_gets_no_link(dispatch_app, dispatch_client, dispatcher) -> None:
    order = create_order(dispatch_client, dispatcher)
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert (
        dispatch_client.post(f"/orders/{order['id']}/tracking", headers=stranger.headers).status_code == 404
    )


def test_on_the_way_the_view_hides_the_recipient_and_shows_a_coarse_courier(
    dispatch_client, dispatcher, courier
) -> None:
    Company.update(show_courier_phone=True).execute()
    order = assigned_order(
        dispatch_client,
        dispatcher,
        courier,
        otpRequired=True,
        recipientName="Gayane Petrosyan",
        addressLabelEn="10 Abovyan street",
    )
    token = _link(dispatch_client, dispatcher, order["id"])["token"]
    preparing = _view(dispatch_client, token)
    assert preparing["state"] == "preparing" and preparing["stage"] == "assigned"
    assert preparing["otpCode"] is None and preparing["courier"] is None and preparing["courierPhone"] is None
    _gps(dispatch_client, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    moving = _view(dispatch_client, token)
    assert moving["state"] == "on_the_way" and moving["stage"] == "picked_up"
    assert [t["stage"] for t in moving["timeline"]] == ["created", "assigned", "picked_up"]
    assert moving["courierName"] == "Narek" and 0 <= moving["courierLine"] <= 7
    assert moving["courier"] == {"lat": 40.1825, "lon": 44.5165}
    assert moving["courierPhone"] == "+37499111222"
    assert len(moving["otpCode"]) == 6
    assert moving["route"] and moving["etaSeconds"] is not None
    assert moving["proof"] is None and moving["receipt"] is None
    text = json.dumps(moving, ensure_ascii=False)
    for secret in ("Gayane", "Petrosyan", ORDER["recipientPhone"], ORDER["addressLabelHy"], "Abovyan"):
        assert secret not in text
    courier_status(dispatch_client, courier, order["id"], status="arrived")
    arrived = _view(dispatch_client, token)
    assert arrived["state"] == "on_the_way" and arrived["stage"] == "arrived"


def test_the_courier_point_is_snapped_so_reads_cannot_be_averaged_back() -> None:
    points = {coarsen(40.18201 + i * 0.00009, 44.51601) for i in range(10)}
    assert points == {(40.1825, 44.5165)}


def test_once_delivered_the_view_shows_proof_receipt_and_takes_one_rating(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=9000)
    token = _link(dispatch_client, dispatcher, order["id"])["token"]
    assert dispatch_client.post(f"/track/{token}/rating", json={"ok": True}).status_code == 409
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(
        dispatch_client, courier, order["id"], status="delivered", recipientName="Gayane Petrosyan"
    )
    view = _view(dispatch_client, token)
    assert view["state"] == "delivered" and view["courier"] is None and view["otpCode"] is None
    assert view["proof"]["receivedBy"] == "Gayane" and view["proof"]["method"] == "name"
    assert view["receipt"] == {
        "orderNumber": order["publicId"],
        "address": {"hy": ORDER["addressLabelHy"], "en": None, "ru": None},
        "payment": {"method": "cash", "amountAmd": 9000},
        "fiscal": None,  # no e-HDM receipt: the company has none set up (docs/fiscal-receipts.md)
    }
    rated = dispatch_client.post(f"/track/{token}/rating", json={"ok": False, "comment": "late"})
    assert rated.status_code == 201 and rated.json["rating"]["ok"] is False
    assert dispatch_client.post(f"/track/{token}/rating", json={"ok": True}).status_code == 409
    assert _view(dispatch_client, token)["rating"]["ok"] is False


def test_a_rating_comment_over_1000_characters_is_400(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    token = _link(dispatch_client, dispatcher, order["id"])["token"]
    assert (
        dispatch_client.post(f"/track/{token}/rating", json={"ok": True, "comment": "x" * 1001}).status_code
        == 400
    )
    assert dispatch_client.post(f"/track/{'z' * 30}/rating", json={"ok": True}).status_code == 404


def test_a_failed_delivery_shows_its_reason(dispatch_client, dispatcher, courier) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    token = _link(dispatch_client, dispatcher, order["id"])["token"]
    courier_status(dispatch_client, courier, order["id"], status="failed", failureReason="refused")
    view = _view(dispatch_client, token)
    assert view["state"] == "failed" and view["failureReason"] == "refused" and view["receipt"] is None


@pytest.mark.parametrize(
    ("language", "expected"),
    [("hy", "րոպե"), ("ru", "мин"), ("en", "min late")],
)
def test_notify_late_writes_the_text_in_three_languages_with_a_fresh_link(
    dispatch_client, dispatcher, courier, language, expected
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    old = _link(dispatch_client, dispatcher, order["id"])["token"]
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/notify-late", json={"delayMinutes": 20}, headers=dispatcher.headers
        ).status_code
        == 409
    )
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    response = dispatch_client.post(
        f"/orders/{order['id']}/notify-late",
        json={"delayMinutes": 20, "language": language},
        headers=dispatcher.headers,
    )
    assert response.status_code == 201
    body = response.json
    assert expected in body["message"] and "20" in body["message"] and "Arev" in body["message"]
    assert body["trackingLink"]["url"] in body["message"]
    assert body["recipientPhone"] == ORDER["recipientPhone"]
    assert dispatch_client.get(f"/track/{old}").status_code == 404
    assert dispatch_client.get(f"/track/{body['trackingLink']['token']}").status_code == 200
    kinds = [
        e["kind"]
        for e in dispatch_client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json[
            "events"
        ]
    ]
    assert "late_notified" in kinds


def test_notify_late_uses_the_company_template(dispatch_client, dispatcher, courier) -> None:
    Company.update(sms_template="{company} late {minutes}m {link} {unknown}").execute()
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    body = dispatch_client.post(
        f"/orders/{order['id']}/notify-late", json={"delayMinutes": 7}, headers=dispatcher.headers
    ).json
    assert body["message"].startswith("Arev late 7m http") and body["message"].endswith("{unknown}")


@pytest.mark.parametrize(
    "body", [{"delayMinutes": 0}, {"delayMinutes": 601}, {"language": "de"}, {"ttlHours": 800}]
)
def test_notify_late_limits_are_400(dispatch_client, dispatcher, courier, body) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/notify-late", json=body, headers=dispatcher.headers
        ).status_code
        == 400
    )


def test_the_tracking_page_is_served(dispatch_client) -> None:
    response = dispatch_client.get("/t/" + "a" * 32)
    assert response.status_code == 200 and response.mimetype == "text/html"
