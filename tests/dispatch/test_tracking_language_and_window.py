"""The tracking view in the recipient's language and against the delivery window (issue 46)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.models import Company, RecipientSettings
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status

# 08:40 in Yerevan; the window 11:00-14:00 Yerevan time.
NOW = datetime(2026, 11, 20, 4, 40, tzinfo=UTC)
WINDOW = {
    "deliveryWindowStart": "2026-11-20T11:00:00+04:00",
    "deliveryWindowEnd": "2026-11-20T14:00:00+04:00",
}


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def frozen():
    clock.freeze(NOW)
    yield
    clock.freeze(None)


@pytest.fixture
def dispatcher(frozen, dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


@pytest.fixture
def courier(frozen, dispatch_app, company):
    return make_member(dispatch_app, company, "courier", name="Narek")


def _view(client, dispatcher, order_id):
    link = client.post(f"/orders/{order_id}/tracking", json={}, headers=dispatcher.headers).json
    answer = client.get(f"/track/{link['token']}")
    assert answer.status_code == 200, answer.data
    return answer.json


def test_the_view_names_the_orders_language_else_the_companys_default(dispatch_client, dispatcher, courier):
    russian = assigned_order(dispatch_client, dispatcher, courier, recipientLanguage="ru")
    assert _view(dispatch_client, dispatcher, russian["id"])["language"] == "ru"
    unsaid = assigned_order(dispatch_client, dispatcher, courier)
    assert _view(dispatch_client, dispatcher, unsaid["id"])["language"] == "hy"
    company = Company.get()
    RecipientSettings.insert(company=company.id, default_language="en").on_conflict(
        conflict_target=[RecipientSettings.company], update={RecipientSettings.default_language: "en"}
    ).execute()
    assert _view(dispatch_client, dispatcher, unsaid["id"])["language"] == "en"


def test_an_early_estimate_is_shown_against_the_window_not_before_it(dispatch_client, dispatcher, courier):
    order = assigned_order(dispatch_client, dispatcher, courier, **WINDOW)
    dispatch_client.post(
        "/courier/location",
        json={"points": [{"lat": 40.1800, "lon": 44.5100, "capturedAt": "2026-11-20T04:39:00Z"}]},
        headers=courier.headers,
    )
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    view = _view(dispatch_client, dispatcher, order["id"])
    # etaSeconds stays the road estimate (minutes away); the clock time is never before 11:00.
    assert view["etaSeconds"] is not None and view["etaSeconds"] < 3600
    assert view["deliveryWindow"] == {"start": "2026-11-20T07:00:00.000Z", "end": "2026-11-20T10:00:00.000Z"}
    assert view["expectedAt"] == "2026-11-20T07:00:00.000Z"


def test_a_late_notice_links_to_the_page_in_the_texts_language(dispatch_client, dispatcher, courier):
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    body = dispatch_client.post(
        f"/orders/{order['id']}/notify-late",
        json={"language": "ru", "delayMinutes": 20},
        headers=dispatcher.headers,
    ).json
    assert f"{body['trackingLink']['url']}?lang=ru" in body["message"]


def test_once_delivered_no_window_is_shown(dispatch_client, dispatcher, courier):
    order = assigned_order(dispatch_client, dispatcher, courier, **WINDOW)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    clock.advance(timedelta(minutes=5))
    courier_status(dispatch_client, courier, order["id"], status="delivered")
    view = _view(dispatch_client, dispatcher, order["id"])
    assert view["state"] == "delivered" and view["deliveryWindow"] is None and view["expectedAt"] is None
