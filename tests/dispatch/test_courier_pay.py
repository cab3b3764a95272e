"""A courier's earnings from the company's pay rule (issue 46): the app showed the value of the
orders delivered as if it were the courier's pay. Per delivery, per kilometre or per hour, with a
minimum per day worked; set by the owner; the value of the orders shown apart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.models import CourierLocation, Shift
from tests.dispatch.factory import make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)  # 14:00 in Yerevan


@pytest.fixture(autouse=True)
def frozen():
    clock.freeze(NOW)
    yield
    clock.freeze(None)


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def _deliver(client, dispatcher, courier, amount):
    order = assigned_order(client, dispatcher, courier, amountAmd=amount)
    assert courier_status(client, courier, order["id"], status="picked_up").status_code == 200
    assert courier_status(client, courier, order["id"], status="delivered").status_code == 200


def _set(client, owner, **rule):
    answer = client.put("/company/pay-rule", json=rule, headers=owner.headers)
    assert answer.status_code == 200, answer.json
    return answer.json["payRule"]


def test_per_delivery_pay_is_the_courier_s_and_the_orders_value_is_shown_apart(
    dispatch_client, owner, dispatcher, courier
):
    for amount in (4300, 3200):
        _deliver(dispatch_client, dispatcher, courier, amount)
    before = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert before["payRule"] is None and before["today"]["payAmd"] is None
    assert before["today"]["amountAmd"] == 7500
    rule = _set(dispatch_client, owner, basis="delivery", rateAmd=600, minimumAmd=0)
    assert (rule["basis"], rule["rateAmd"]) == ("delivery", 600)
    earned = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert earned["today"]["payAmd"] == 1200 and earned["today"]["payUnits"] == 2
    assert earned["today"]["amountAmd"] == 7500  # the orders' value, apart from the pay
    assert earned["payRule"]["rateAmd"] == 600
    # The dispatcher reads the same for this courier.
    seen = dispatch_client.get(f"/couriers/{courier.courier.id}/earnings", headers=dispatcher.headers).json
    assert seen["today"]["payAmd"] == 1200


def test_a_day_worked_pays_at_least_the_minimum(dispatch_client, owner, dispatcher, courier):
    _deliver(dispatch_client, dispatcher, courier, 1000)
    _set(dispatch_client, owner, basis="delivery", rateAmd=600, minimumAmd=5000)
    earned = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert earned["today"]["payAmd"] == 5000


def test_per_hour_pay_counts_the_open_shift(dispatch_client, owner, courier):
    Shift.create(courier=courier.courier.id, started_at=NOW - timedelta(hours=2, minutes=30), open_flag=1)
    _set(dispatch_client, owner, basis="hour", rateAmd=2000)
    earned = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert earned["today"]["payAmd"] == 5000 and earned["today"]["payUnits"] == 2.5


def test_per_km_pay_follows_the_gps_track_and_never_pays_a_gap(dispatch_client, owner, courier):
    # 0.01° of latitude is 1.112 km: two steps of it, then a jump after half an hour (not paid).
    for minutes, lat in ((0, 40.17), (2, 40.18), (4, 40.19), (40, 40.30)):
        moment = NOW - timedelta(hours=1) + timedelta(minutes=minutes)
        CourierLocation.create(
            courier=courier.courier.id, lat=lat, lon=44.51, captured_at=moment, received_at=moment
        )
    _set(dispatch_client, owner, basis="km", rateAmd=100)
    earned = dispatch_client.get("/courier/earnings", headers=courier.headers).json
    assert earned["today"]["payUnits"] == pytest.approx(2.22, abs=0.01)
    assert earned["today"]["payAmd"] == 222


def test_only_the_owner_sets_the_rule_and_bad_rules_are_refused(dispatch_client, owner, dispatcher):
    refused = dispatch_client.put(
        "/company/pay-rule", json={"basis": "delivery", "rateAmd": 500}, headers=dispatcher.headers
    )
    assert refused.status_code == 403
    bad = dispatch_client.put(
        "/company/pay-rule", json={"basis": "week", "rateAmd": 500}, headers=owner.headers
    )
    assert bad.status_code == 400 and bad.json["errors"][0]["field"] == "basis"
    negative = dispatch_client.put(
        "/company/pay-rule", json={"basis": "km", "rateAmd": -1}, headers=owner.headers
    )
    assert negative.status_code == 400
    assert dispatch_client.get("/company/pay-rule", headers=dispatcher.headers).json == {"payRule": None}
    _set(dispatch_client, owner, basis="km", rateAmd=150)
    assert dispatch_client.delete("/company/pay-rule", headers=owner.headers).status_code == 204
    assert dispatch_client.delete("/company/pay-rule", headers=owner.headers).status_code == 404


def test_the_openapi_document_describes_the_pay_rule_the_phones_moment_and_the_window(dispatch_client):
    document = dispatch_client.get("/openapi.json").json
    paths = document["paths"]
    assert {"get", "put", "delete"} <= set(paths["/company/pay-rule"])
    schemas = document["components"]["schemas"]
    assert "payAmd" in schemas["EarningsWindow"]["properties"]
    assert "occurredAt" in schemas["CourierStatusChange"]["properties"]
    assert {"language", "deliveryWindow", "expectedAt"} <= set(schemas["TrackingView"]["properties"])
    assert "segments" in schemas["MessageSettingsOut"]["properties"]
    assert "failing" in schemas["MessageOut"]["properties"]
