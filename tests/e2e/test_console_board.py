"""The console's day board in a real browser against the real server: create orders with the pin
picker, counts per state, search and filter, assign and reassign, the tracking link and the late
notice ready to paste."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.messages.secrets import seal
from appliance.dispatch.models import Order, RecipientMessage, RecipientSettings
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    screenshot,
    serving,
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST


@pytest.fixture
def board(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    make_member(app, company, "dispatcher", email="lilit@arev.am", password_hash=hash_password(PASSWORD))
    first = make_member(app, company, "courier", name="Narek Hovhannisyan")
    second = make_member(app, company, "courier", name="Armen Grigoryan")
    # An SMS provider (never reached here: no sender runs in this test) for the late notice.
    RecipientSettings.create(
        company=company,
        sms_enabled=True,
        smpp_host="127.0.0.1",
        smpp_port=free_port(),
        smpp_system_id="arev",
        smpp_password_cipher=seal(app.extensions["dispatch"].master_key, company.id, "pw"),
        smpp_source_addr="Arev",
    )
    with serving(mapped_data_dir, port) as url:
        yield url, first.courier, second


def _fill_order(page, name: str, phone: str, address: str, point: tuple[float, float]) -> None:
    page.click("#new-order")
    page.wait_for_selector("#order-dialog[open]")
    wait_until(page, "window.pinPicker && window.pinPicker.map.loaded()", timeout=30)
    page.fill("#o-name", name)
    page.fill("#o-phone", phone)
    page.fill("#o-addr-hy", address)
    # A click on the map drops the pin there; typed coordinates move it to the exact spot.
    page.click("#pin-map", position={"x": 150, "y": 120})
    assert page.input_value("#o-lat") and page.input_value("#o-lon")
    page.fill("#o-lat", str(point[0]))
    page.fill("#o-lon", str(point[1]))
    page.press("#o-lon", "Tab")


def test_a_dispatcher_creates_assigns_and_shares_a_tracking_link(board) -> None:
    url, narek, armen_member = board
    armen = armen_member.courier
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
        page = context.new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.click("[data-lang='en']")

        _fill_order(page, "Gayane Petrosyan", "+37491123456", "Աբովյան 10", ROAD_B)
        page.check("#o-code")
        screenshot(page, "console-create-order")
        page.click("#order-save")
        page.wait_for_selector("#orders tbody tr[data-status='ready']")
        _fill_order(page, "Tigran Mkrtchyan", "+37477000111", "Թումանյան 5", ROAD_C)
        page.fill("#o-amount", "7000")
        page.check("#o-cod")
        # Tigran reads Russian and gets e-mail too; Gayane gets the company's default language.
        page.select_option("#o-lang", "ru")
        page.fill("#o-email", "tigran@example.am")
        page.click("#order-save")
        wait_until(page, "document.querySelectorAll('#orders tbody tr[data-status=ready]').length === 2")

        created = {o.recipient_name: o for o in Order.select()}
        gayane = created["Gayane Petrosyan"]
        assert (round(gayane.lat, 5), round(gayane.lon, 5)) == (round(ROAD_B[0], 5), round(ROAD_B[1], 5))
        assert gayane.otp_required and created["Tigran Mkrtchyan"].is_cod
        assert created["Tigran Mkrtchyan"].cod_amount_amd == 7000
        tigran = created["Tigran Mkrtchyan"]
        assert (tigran.recipient_language, tigran.recipient_email) == ("ru", "tigran@example.am")
        assert (gayane.recipient_language, gayane.recipient_email) == (None, None)
        assert page.inner_text("[data-count='ready']") == "2"
        assert wait_until(page, "document.querySelectorAll('.map-marker.order').length") == 2

        # Search and the state chips narrow the board in the page.
        page.fill("#search", "77000")
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 1")
        assert "Tigran" in page.inner_text("#orders tbody")
        page.fill("#search", "")

        # Assign, then reassign to the other courier.
        row = f"#orders tbody tr[data-order-id='{gayane.id}']"
        page.select_option(f"{row} select[data-assign]", str(narek.id))
        assert Order.get_by_id(gayane.id).status == "ready"  # a choice in the list assigns nothing
        page.click(f"{row} [data-assign-go]")
        page.wait_for_selector(f"{row}[data-status='assigned']")
        assert page.inner_text("[data-count='assigned']") == "1"
        page.select_option(f"{row} select[data-assign]", str(armen.id))
        page.click(f"{row} [data-assign-go]")
        wait_until(page, f"document.querySelector(\"{row} select\").value === '{armen.id}'")
        assert Order.get_by_id(gayane.id).status == "assigned"
        page.select_option("#filter-courier", str(armen.id))
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 1")
        page.select_option("#filter-courier", "")
        page.click("[data-state='assigned']")
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 1")
        page.click("[data-state='all']")
        screenshot(page, "console-day-board")

        # The courier picks it up (from the app); the board follows the realtime stream.
        answer = requests.post(
            f"{url}/courier/orders/{gayane.id}/status",
            json={"status": "picked_up"},
            headers=armen_member.headers,
        )
        assert answer.status_code == 200, answer.text
        page.wait_for_selector(f"{row}[data-status='picked_up']")

        # Wrong codes in the courier's app lock the delivery code (423).
        for _ in range(6):
            wrong = requests.post(
                f"{url}/courier/orders/{gayane.id}/otp/verify",
                json={"code": "000000"},
                headers=armen_member.headers,
            )
        assert wrong.status_code == 423, wrong.text

        # The tracking link, copied; the late notice previewed with its SMS cost (Armenian: UCS-2),
        # then sent to the recipient through the company's provider (queued for the sender).
        page.click(f"{row} [data-link]")
        page.wait_for_selector("#link-dialog[open]")
        link = page.input_value("#link-url")
        assert "/t/" in link
        page.click("#link-copy")
        assert page.evaluate("navigator.clipboard.readText()") == link
        page.fill("#late-delay", "20")
        page.click("#late-make")
        wait_until(page, "document.querySelector('#late-text').value.length > 0")
        text = page.input_value("#late-text")
        assert "/t/" in text and "20 րոպե" in text
        cost = page.inner_text("#late-to")
        assert "+37491123456" in cost and "UCS2" in cost
        assert page.get_attribute("#late-to", "data-segments") == "2"
        page.click("#late-send")
        wait_until(page, "document.querySelector('#late-send').hidden")
        late = RecipientMessage.get(RecipientMessage.event == "late")
        assert (late.order_id, late.channel, late.status) == (gayane.id, "sms", "queued")
        screenshot(page, "console-tracking-link")
        # The locked code is shown with what to do, one click from a fresh one (the tracking page
        # shows it); the board flags the row until then.
        assert page.get_attribute("#link-code", "data-locked") == "true"
        assert "locked" in page.inner_text("#code-advice")
        page.wait_for_selector(f"{row} [data-code-locked]")
        screenshot(page, "console-code-locked")
        before = Order.get_by_id(gayane.id).otp_hash
        page.click("#code-reset")
        wait_until(page, "document.querySelector('#toast').textContent.includes('new code')")
        assert page.get_attribute("#link-code", "data-locked") == "false"
        assert Order.get_by_id(gayane.id).otp_hash != before and Order.get_by_id(gayane.id).otp_attempts == 0
        page.click("#link-dialog button[type='submit']")
        assert page.locator(f"{row} [data-code-locked]").count() == 0

        # Unassign the other order: back to ready, by the API's own move.
        other = f"#orders tbody tr[data-order-id='{created['Tigran Mkrtchyan'].id}']"
        page.select_option(f"{other} select[data-assign]", str(narek.id))
        page.click(f"{other} [data-assign-go]")
        page.wait_for_selector(f"{other}[data-status='assigned']")
        page.click(f"{other} [data-move='ready']")
        page.wait_for_selector(f"{other}[data-status='ready']")
