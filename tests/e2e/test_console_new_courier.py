"""A dispatcher adds a courier in the console with a password and hands it over at the depot; the
courier signs in to the courier app with it at once and sees the order assigned to them
(issue 40: the specification's courier create, its password a company-set credential)."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Courier, User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    courier_phone,
    serving,
    sign_in_app,
    sign_in_console,
)
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = BROWSER_TEST


@pytest.fixture
def console(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    arev = make_company("Arev Express", depot=ROAD_A)
    ani = make_member(
        app, arev, "dispatcher", email="ani@arev.am", name="Ani", password_hash=hash_password(PASSWORD)
    )
    User.update(language="en").where(User.id == ani.user.id).execute()
    with serving(mapped_data_dir, port) as url:
        yield url, ani


def test_a_courier_added_in_the_console_signs_in_to_the_app_with_the_password_handed_over(console) -> None:
    url, ani = console
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        sign_in_console(page, url, "ani@arev.am")
        page.click("[data-view-tab='team']")
        page.fill("#nc-name", "Aram")
        page.fill("#nc-email", "aram@arev.am")
        page.fill("#nc-password", "given-at-the-depot")
        page.fill("#nc-vehicle", "Scooter 12")
        page.click("#courier-form button[type='submit']")
        page.wait_for_selector("#courier-created:has-text('aram@arev.am')")
        aram = Courier.get(Courier.display_name == "Aram")
        page.wait_for_selector(f"#members tr[data-member='{aram.user_id}']")

        order = {**ORDER, "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]}}
        created = requests.post(f"{url}/orders", json=order, headers=ani.headers)
        assert created.status_code == 201, created.text
        order_id = created.json()["order"]["id"]
        ready = requests.post(
            f"{url}/orders/{order_id}/status", json={"status": "ready"}, headers=ani.headers
        )
        assert ready.status_code == 200, ready.text
        assigned = requests.post(
            f"{url}/orders/{order_id}/assign", json={"courierId": aram.id}, headers=ani.headers
        )
        assert assigned.status_code == 201, assigned.text

        phone = courier_phone(browser, ROAD_A).new_page()
        phone.goto(url + "/app/?lang=en")
        sign_in_app(phone, "aram@arev.am", "given-at-the-depot")
        phone.wait_for_selector(f"li[data-order-id='{order_id}']")
