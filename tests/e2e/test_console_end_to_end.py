"""The whole day in two browsers against the real server (issue 16): a dispatcher signs in, creates
three orders on the map, suggests and applies a plan and watches the courier move on the live map;
the courier (a second browser context, a phone with geolocation set by the test) starts a shift,
picks up, and delivers with the delivery code and a photo while offline, then online; the console
shows the delivery through the realtime stream. Screenshots of each screen in test-artifacts/."""

from __future__ import annotations

import os
import time

import pytest

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order, OrderEvent
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.e2e.console_server import (
    ARTIFACTS,
    BROWSER_TEST,
    PASSWORD,
    chromium,
    courier_phone,
    screenshot,
    serving,
    sign_in_app,
    sign_in_console,
    wait_until,
)
from tests.e2e.test_courier_app import photo_file
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST
STOPS = (
    ("Gayane Petrosyan", "+37491123456", "Աբովյան 10", ROAD_B),
    ("Tigran Mkrtchyan", "+37477000111", "Թումանյան 5", ROAD_C),
    ("Lusine Hakobyan", "+37455123123", "Սայաթ-Նովա 3", ROAD_B),
)


@pytest.fixture
def appliance(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    make_member(
        app, company, "dispatcher", email="lilit@arev.am", name="Lilit", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hash_password(PASSWORD)
    )
    with serving(mapped_data_dir, port) as url:
        yield url, courier.courier


def _create_order(page, name: str, phone: str, address: str, point: tuple[float, float], code: bool) -> None:
    page.click("#new-order")
    page.wait_for_selector("#order-dialog[open]")
    wait_until(page, "window.pinPicker && window.pinPicker.map.loaded()", timeout=30)
    page.fill("#o-name", name)
    page.fill("#o-phone", phone)
    page.fill("#o-addr-hy", address)
    page.click("#pin-map", position={"x": 160, "y": 140})
    page.fill("#o-lat", str(point[0]))
    page.fill("#o-lon", str(point[1]))
    page.press("#o-lon", "Tab")
    if code:
        page.check("#o-code")
    page.click("#order-save")
    page.wait_for_selector("#order-dialog", state="hidden")


def test_a_dispatcher_and_a_courier_run_a_delivery_end_to_end(appliance, tmp_path) -> None:
    url, courier = appliance
    marker = f"[data-marker=courier][data-id='{courier.id}']"
    with chromium() as browser:
        desk = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="en-US")
        phone_context = courier_phone(browser, ROAD_A)
        console = desk.new_page()
        phone = phone_context.new_page()

        # The courier signs in and starts a shift: the phone's position goes to the server.
        phone.goto(url + "/app/?lang=en")
        sign_in_app(phone, "narek@arev.am")
        phone.click("[data-lang='en']")
        phone.click("#shift-start")
        phone.wait_for_selector("body[data-shift='active']")
        screenshot(phone, "e2e-courier-shift")

        # The dispatcher signs in, sees the courier on the map, and creates three orders.
        sign_in_console(console, url, "lilit@arev.am")
        console.click("[data-lang='en']")
        console.wait_for_selector(marker, timeout=20000)
        for index, (name, phone_number, address, point) in enumerate(STOPS):
            _create_order(console, name, phone_number, address, point, code=index == 0)
        wait_until(console, "document.querySelectorAll('#orders tbody tr[data-status=ready]').length === 3")
        screenshot(console, "e2e-console-three-orders")

        # Suggest a plan for the three orders and the courier, then apply it.
        for order in Order.select():
            console.check(f"[data-select='{order.id}']")
        console.check(f"[data-choose-courier='{courier.id}']")
        console.click("#plan-suggest")
        console.wait_for_selector("body[data-plan='shown']", timeout=30000)
        assert console.locator(f"[data-lane='{courier.id}'] li[data-stop]").count() == 3
        wait_until(console, "window.liveMap.routes.features.length === 1")
        screenshot(console, "e2e-console-plan")
        console.click("#plan-apply")
        console.wait_for_selector("body[data-plan='applied']")
        wait_until(
            console, "document.querySelectorAll('#orders tbody tr[data-status=assigned]').length === 3"
        )

        # The courier's run, in the plan's order; the courier moves and the console's map follows.
        phone.click("[data-tab='run']")
        wait_until(phone, "document.querySelectorAll('#run li').length === 3")
        planned = [o.id for o in Order.select().order_by(Order.sequence)]
        assert (
            phone.eval_on_selector_all("#run li", "els => els.map(e => Number(e.dataset.orderId))") == planned
        )
        screenshot(phone, "e2e-courier-run")
        phone_context.set_geolocation({"latitude": ROAD_C[0], "longitude": ROAD_C[1], "accuracy": 6})
        wait_until(console, f"document.querySelector(\"{marker}\").dataset.lat === '{ROAD_C[0]}'", timeout=30)
        screenshot(console, "e2e-console-courier-moved")

        # The coded order: picked up; the recipient's code is on the tracking page the console links to.
        coded = Order.get(Order.otp_required == True)  # noqa: E712 (peewee expression)
        card = f"#run li[data-order-id='{coded.id}']"
        phone.click(f"{card} [data-move='picked_up']")
        phone.wait_for_selector(f"{card}[data-status='picked_up'][data-pending='false']")
        row = f"#orders tbody tr[data-order-id='{coded.id}']"
        console.wait_for_selector(f"{row}[data-status='picked_up']")
        console.click(f"{row} [data-link]")
        console.wait_for_selector("#link-dialog[open]")
        tracking = desk.new_page()
        tracking.goto(console.input_value("#link-url"))
        tracking.wait_for_selector("body[data-stage='picked_up']")
        code = tracking.inner_text("#code").strip()
        screenshot(tracking, "e2e-tracking-page")
        console.click("#link-dialog button[type='submit']")

        # Delivered with the code and a photo while offline; sent when the connection returns.
        phone_context.set_offline(True)
        phone.click(f"{card} [data-move='delivered']")
        phone.fill("#d-code", code)
        phone.set_input_files("#d-photo", str(photo_file(tmp_path)))
        phone.click("#deliver-send")
        phone.wait_for_selector(f"{card}[data-pending='true']")
        screenshot(phone, "e2e-courier-offline")
        assert console.get_attribute(row, "data-status") == "picked_up"
        phone_context.set_offline(False)
        wait_until(phone, "document.body.dataset.queuedMoves === '0'", timeout=30)
        sent = time.monotonic()
        console.wait_for_selector(f"{row}[data-status='delivered']", timeout=10000)
        seen = time.monotonic() - sent
        screenshot(console, "e2e-console-delivered")
        screenshot(phone, "e2e-courier-after")
        delivered = Order.get_by_id(coded.id)
        assert delivered.status == "delivered" and delivered.proof_photo_key
        delivered_events = (OrderEvent.order == coded.id) & (OrderEvent.to_status == "delivered")
        assert OrderEvent.select().where(delivered_events).count() == 1
        (ARTIFACTS / "e2e-delivery-seen-seconds.txt").write_text(f"{seen:.3f}\n")
        # The stream polls every 0.5 s, so the console shows a delivery well within a second; the
        # bound is checked only when asked (make test holds no timed assertions).
        if os.environ.get("APPLIANCE_TEST_TIMING"):
            assert seen < 1.0, seen
