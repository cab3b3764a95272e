"""Fixtures of the browser tests. pages_demo: the real server the issue 49 tests share, a company
with a dispatcher and a courier who sign in, and an order on its way with its tracking link."""

from __future__ import annotations

import pytest

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status
from tests.e2e.console_server import PASSWORD, serving
from tests.geo_fixtures import ROAD_A, ROAD_B


@pytest.fixture(scope="module")
def pages_password_hash() -> str:
    return hash_password(PASSWORD)  # argon2 once for the module's accounts


@pytest.fixture
def pages_demo(mapped_data_dir, settings, pages_password_hash):
    """A company with a dispatcher and a courier who sign in, and an order on its way (a courier
    position, so an arrival estimate) with its tracking link."""
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    client = app.test_client()
    company = make_company("Arev Express", depot=ROAD_A)
    hashed = pages_password_hash
    dispatcher = make_member(app, company, "dispatcher", email="anahit@arev.am", password_hash=hashed)
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek Hovhannisyan", password_hash=hashed
    )
    order = assigned_order(client, dispatcher, courier, pin={"lat": ROAD_B[0], "lon": ROAD_B[1]})
    client.post(
        "/courier/location",
        json={"points": [{"lat": ROAD_A[0], "lon": ROAD_A[1], "capturedAt": "2026-11-22T10:00:00Z"}]},
        headers=courier.headers,
    )
    courier_status(client, courier, order["id"], status="picked_up")
    token = client.post(f"/orders/{order['id']}/tracking", headers=dispatcher.headers).json["token"]
    with serving(mapped_data_dir, port) as url:
        yield {"url": url, "token": token, "company": company}
