"""The dispatch service's raw-SQL hot paths and listings on a real PostgreSQL server."""

from __future__ import annotations

import pytest

from appliance.dispatch.app import create_app
from appliance.dispatch.db import database
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_app(settings, migrated_postgres):
    app = create_app(settings.replace(dispatch_database=migrated_postgres("migrations.dispatch")))
    yield app
    database.close_all()


def test_gps_batches_orders_and_cash_work_on_postgresql(pg_app) -> None:
    client = pg_app.test_client()
    company = make_company("Arev")
    dispatcher = make_member(pg_app, company, "dispatcher")
    courier = make_member(pg_app, company, "courier")
    points = [{"lat": 40.18, "lon": 44.51, "capturedAt": f"2026-11-22T10:0{i}:00Z"} for i in range(5)]
    assert (
        client.post("/courier/location", json={"points": points}, headers=courier.headers).json["accepted"]
        == 5
    )
    again = client.post("/courier/location", json={"points": points}, headers=courier.headers).json
    assert again["accepted"] == 0 and again["current"]["capturedAt"] == "2026-11-22T10:04:00.000Z"
    create_order(client, dispatcher)
    order = assigned_order(client, dispatcher, courier, isCod=True, amountAmd=3000)
    courier_status(client, courier, order["id"], status="picked_up")
    assert courier_status(client, courier, order["id"], status="delivered").status_code == 200
    listed = client.get("/orders?limit=10", headers=dispatcher.headers).json
    assert len(listed["orders"]) == 2 and listed["orders"][0]["createdAt"].endswith("Z")
    settlement = client.post("/courier/cash/settle", headers=courier.headers).json["settlement"]
    confirmed = client.post(f"/cash/settlements/{settlement['id']}/confirm", headers=dispatcher.headers)
    assert confirmed.status_code == 200 and confirmed.json["courierOutstandingAmd"] == 0
    events = client.get(f"/orders/{order['id']}/events", headers=dispatcher.headers).json["events"]
    assert [e["kind"] for e in events][:2] == ["created", "status_changed"]
