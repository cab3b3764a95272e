"""The courier app's day (issue 45) in a real browser against the real server: the stops planned
for tomorrow stay out of the app until their day comes (then they are today's run, with moves),
and one tap at the depot marks every stop of today picked up (each through the outbox with its own
key)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import requests

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    courier_phone,
    eventually,
    screenshot,
    serving,
    sign_in_app,
)
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST


@pytest.fixture
def day(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(app, company, "dispatcher")
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hash_password(PASSWORD)
    )
    tomorrow = (clock.now().astimezone(clock.YEREVAN) + timedelta(days=1)).date()
    opens = datetime.combine(tomorrow, datetime.min.time(), tzinfo=clock.YEREVAN).replace(hour=10)
    later = {
        "deliveryWindowStart": opens.isoformat(),
        "deliveryWindowEnd": (opens + timedelta(hours=3)).isoformat(),
    }
    with serving(mapped_data_dir, port) as url:
        today, planned = [], []
        for n, point in enumerate((ROAD_B, ROAD_C, ROAD_B, ROAD_C, ROAD_B)):
            extra = later if n >= 3 else {}
            body = (
                ORDER | extra | {"recipientName": f"Recipient {n}", "pin": {"lat": point[0], "lon": point[1]}}
            )
            order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
            requests.post(
                f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
            )
            assigned = requests.post(
                f"{url}/orders/{order['id']}/assign",
                json={"courierId": courier.courier.id},
                headers=dispatcher.headers,
            )
            assert assigned.status_code == 201, assigned.text
            (planned if extra else today).append(order)
        yield url, tomorrow.isoformat(), today, planned


def test_tomorrows_stops_stay_out_of_the_app_until_their_day_and_one_tap_picks_up_all_of_today(day) -> None:
    url, _tomorrow, today, planned = day
    with chromium() as browser:
        page = courier_phone(browser, ROAD_A, device_scale_factor=1).new_page()
        page.goto(url + "/app/")
        page.wait_for_selector("body[data-view='signin']")
        sign_in_app(page, "narek@arev.am")
        page.click("[data-lang='en']")
        page.wait_for_selector(f"#run li[data-order-id='{today[2]['id']}']")
        assert page.locator("#run li").count() == 3
        assert page.locator(f"li[data-order-id='{planned[0]['id']}']").count() == 0
        assert page.inner_text("#pick-up-all") == "Picked up all (3)"
        screenshot(page, "courier-app-day")

        page.click("#pick-up-all")
        eventually(lambda: {Order.get_by_id(o["id"]).status for o in today} == {"picked_up"})
        assert {Order.get_by_id(o["id"]).status for o in planned} == {"assigned"}
        page.wait_for_selector("#run li[data-status='picked_up'][data-pending='false']")
        page.wait_for_selector("#pick-up-all", state="hidden")

        # Their day comes (the server runs on the real clock, so the windows move to today: the
        # API test of GET /courier/orders freezes the clock across midnight instead).
        opens = clock.now().astimezone(clock.YEREVAN).replace(hour=0, minute=0, second=0, microsecond=0)
        ids = [int(o["id"]) for o in planned]
        Order.update(window_start=opens, window_end=opens + timedelta(hours=23)).where(
            Order.id.in_(ids)
        ).execute()
        page.reload()
        page.wait_for_selector(f"#run li[data-order-id='{planned[1]['id']}'] [data-move]")
        seq = page.inner_text(f"#run li[data-order-id='{planned[0]['id']}'] .seq")
        assert seq == str(Order.get_by_id(planned[0]["id"]).sequence)
        assert page.inner_text("#pick-up-all") == "Picked up all (2)"
