"""Every row of the Couriers table (dispatcher side) except /eta: the list with latest location,
open shift, last shift and outstanding cash; create; detail; edit; earnings; ending a shift."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.couriers.schemas import CourierEnvelope, CourierList, EarningsOut
from appliance.dispatch.models import Membership, User
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import sent_mail
from tests.dispatch.orders_helpers import assigned_order, courier_status


def test_the_list_shows_latest_location_shifts_and_outstanding_cash(
    dispatch_client, dispatcher, courier
) -> None:
    dispatch_client.post(
        "/courier/location",
        json={
            "points": [
                {"lat": 40.19, "lon": 44.52, "capturedAt": "2026-11-22T10:00:02Z"},
                {"lat": 40.18, "lon": 44.51, "capturedAt": "2026-11-22T10:00:01Z"},
            ]
        },
        headers=courier.headers,
    )
    dispatch_client.post("/courier/shift/start", headers=courier.headers)
    dispatch_client.post(f"/couriers/{courier.courier.id}/shift/end", headers=dispatcher.headers)
    dispatch_client.post("/courier/shift/start", headers=courier.headers)
    order = assigned_order(dispatch_client, dispatcher, courier, isCod=True, amountAmd=2500)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(dispatch_client, courier, order["id"], status="delivered", collectedAmountAmd=2000)
    response = dispatch_client.get("/couriers", headers=dispatcher.headers)
    (entry,) = CourierList.model_validate(response.json).couriers
    assert entry.location is not None and (entry.location.lat, entry.location.capturedAt) == (
        40.19,
        "2026-11-22T10:00:02.000Z",
    )
    assert entry.shift is not None and entry.shift.status == "active"
    assert entry.lastShift is not None and entry.lastShift.endedByName == dispatcher.user.display_name
    assert entry.outstandingCashAmd == 2000


def test_another_companys_couriers_are_not_listed_and_behave_as_missing(
    dispatch_app, dispatch_client, courier
) -> None:
    stranger = make_member(dispatch_app, make_company("Other"), "dispatcher")
    assert dispatch_client.get("/couriers", headers=stranger.headers).json == {"couriers": []}
    for method, path in (
        ("get", "/couriers/{id}"),
        ("patch", "/couriers/{id}"),
        ("get", "/couriers/{id}/earnings"),
        ("post", "/couriers/{id}/shift/end"),
    ):
        response = getattr(dispatch_client, method)(
            path.format(id=courier.courier.id), json={"active": False}, headers=stranger.headers
        )
        assert response.status_code == 404, path
        response = getattr(dispatch_client, method)(
            path.format(id=2**64), json={"active": False}, headers=stranger.headers
        )
        assert response.status_code == 404, path


def test_a_created_courier_signs_in_with_the_password_the_dispatcher_set(
    dispatch_client, company, dispatcher, data_dir
) -> None:
    response = dispatch_client.post(
        "/couriers",
        json={
            "email": "Aram@Example.am",
            "password": "long-enough",
            "displayName": "Aram",
            "phone": "+37499000000",
            "vehicleLabel": "Scooter 12",
        },
        headers=dispatcher.headers,
    )
    assert response.status_code == 201
    created = CourierEnvelope.model_validate(response.json).courier
    assert (created.email, created.vehicleLabel, created.active) == ("aram@example.am", "Scooter 12", True)
    user = User.get(User.email == "aram@example.am")
    assert created.userId == str(user.id)
    # The password is a company-set credential (hashed), not the account's own, and the address
    # stays unproven; nothing is mailed.
    assert user.password_hash is None and not user.email_confirmed
    assert sent_mail(dispatch_client) == []
    membership = Membership.get(Membership.user == user)
    assert (membership.company_id, membership.role) == (company.id, "courier")
    detail = dispatch_client.get(f"/couriers/{created.id}", headers=dispatcher.headers)
    assert CourierEnvelope.model_validate(detail.json).courier.openOrders == 0
    signed_in = dispatch_client.post(
        "/auth/login", json={"email": "aram@example.am", "password": "long-enough"}
    )
    assert signed_in.status_code == 200 and signed_in.json["role"] == "courier"
    assert signed_in.json["user"]["courierId"] == created.id


@pytest.mark.parametrize(
    "body",
    [
        {"email": "not-an-email", "password": "long-enough", "displayName": "A"},
        {"email": "a@example.am", "password": "short", "displayName": "A"},
        {"email": "a@example.am", "password": "long-enough"},
        {"email": "a@example.am", "password": "long-enough", "displayName": ""},
        {"email": "a@example.am", "password": "long-enough", "displayName": "A", "phone": 37499},
    ],
)
def test_bad_courier_accounts_are_400(dispatch_client, dispatcher, body) -> None:
    response = dispatch_client.post("/couriers", json=body, headers=dispatcher.headers)
    assert response.status_code == 400 and response.json["errors"]


def test_an_email_with_an_account_in_another_company_answers_like_any_other(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    elsewhere = make_member(dispatch_app, make_company("Other"), "dispatcher", email="known@example.am")

    def create(email: str) -> dict:
        body = {"email": email, "password": "long-enough", "displayName": "Again"}
        response = dispatch_client.post("/couriers", json=body, headers=dispatcher.headers)
        assert response.status_code == 201
        skip = {"id", "userId", "email", "createdAt"}
        return {k: v for k, v in response.json["courier"].items() if k not in skip}

    assert create("known@example.am") == create("nobody@example.am")
    # Nothing joins the existing account to this company until its holder proves the address.
    assert [m.company_id for m in Membership.select().where(Membership.user == elsewhere.user.id)] == [
        elsewhere.membership.company_id
    ]


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"displayName": "Renamed"}, 200),
        ({"phone": None}, 200),
        ({"vehicleLabel": "Car 7"}, 200),
        ({"active": False}, 200),
        ({"active": None}, 400),
        ({"displayName": None}, 400),
        ({"active": "no"}, 400),
        ({"vehicleLabel": "v" * 121}, 400),
    ],
)
def test_a_dispatcher_edits_courier_metadata_and_active_state(
    dispatch_client, dispatcher, courier, change, status
) -> None:
    response = dispatch_client.patch(
        f"/couriers/{courier.courier.id}", json=change, headers=dispatcher.headers
    )
    assert response.status_code == status
    if status == 200:
        body = CourierEnvelope.model_validate(response.json).model_dump()["courier"]
        for field, value in change.items():
            assert body[field] == value


def test_a_dispatcher_sees_a_couriers_earnings(dispatch_client, dispatcher, courier) -> None:
    clock.freeze(datetime(2026, 11, 22, 9, 0, tzinfo=UTC))
    order = assigned_order(dispatch_client, dispatcher, courier, amountAmd=3000)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(dispatch_client, courier, order["id"], status="delivered")
    response = dispatch_client.get(f"/couriers/{courier.courier.id}/earnings", headers=dispatcher.headers)
    earnings = EarningsOut.model_validate(response.json)
    assert earnings.today.delivered == earnings.week.delivered == earnings.allTime.delivered == 1
    assert earnings.today.amountAmd == 3000 and earnings.dayStart == "2026-11-21T20:00:00.000Z"
    assert earnings.weekStart == "2026-11-15T20:00:00.000Z"  # Monday 16 November, 00:00 in Yerevan


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/couriers"),
        ("post", "/couriers"),
        ("get", "/couriers/{id}"),
        ("patch", "/couriers/{id}"),
        ("get", "/couriers/{id}/earnings"),
        ("post", "/couriers/{id}/shift/end"),
    ],
)
def test_couriers_get_403_on_the_dispatcher_courier_routes(dispatch_client, courier, method, path) -> None:
    response = getattr(dispatch_client, method)(
        path.format(id=courier.courier.id), json={"active": True}, headers=courier.headers
    )
    assert response.status_code == 403


def _deliver(client, dispatcher, courier, amount: int) -> None:
    order = assigned_order(client, dispatcher, courier, isCod=True, amountAmd=amount)
    courier_status(client, courier, order["id"], status="picked_up")
    assert courier_status(client, courier, order["id"], status="delivered").status_code == 200


def test_earnings_count_yerevan_days_and_weeks(dispatch_app, dispatch_client, company) -> None:
    clock.freeze(datetime(2026, 11, 23, 19, 50, tzinfo=UTC))  # Monday 23:50 in Yerevan
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    courier = make_member(dispatch_app, company, "courier")
    _deliver(dispatch_client, dispatcher, courier, 1000)
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
