"""Issue 28, item 3 in a real browser: the console in the field. The tracking-link dialog shows the
link the recipient holds and issues a new one only as a separate, confirmed action (the "Code
locked" badge opens it without ending the recipient's link)."""

from __future__ import annotations

import pytest
import requests

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
    screenshot,
    serving,
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = BROWSER_TEST


@pytest.fixture
def desk(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(
        app, company, "dispatcher", email="lilit@arev.am", name="Lilit", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(app, company, "courier", name="Narek")
    armen = make_member(app, company, "courier", name="Armen")
    with serving(mapped_data_dir, port) as url:
        yield url, dispatcher, courier, armen


def picked_up_order(url: str, dispatcher, courier, **extra) -> dict:
    body = ORDER | {"recipientName": "Gayane", "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]}} | extra
    order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
    requests.post(f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers)
    requests.post(
        f"{url}/orders/{order['id']}/assign",
        json={"courierId": int(courier.courier.id)},
        headers=dispatcher.headers,
    )
    moved = requests.post(
        f"{url}/courier/orders/{order['id']}/status", json={"status": "picked_up"}, headers=courier.headers
    )
    assert moved.status_code == 200, moved.text
    return order


def test_the_link_dialog_shows_the_link_in_force_and_a_new_one_is_a_confirmed_action(desk) -> None:
    url, dispatcher, courier, _ = desk
    order = picked_up_order(url, dispatcher, courier, otpRequired=True)
    held = requests.post(f"{url}/orders/{order['id']}/tracking", headers=dispatcher.headers).json()
    for _ in range(5):  # the courier's wrong codes lock the code
        requests.post(
            f"{url}/courier/orders/{order['id']}/otp/verify", json={"code": "000000"}, headers=courier.headers
        )
    row = f"#orders tbody tr[data-order-id='{order['id']}']"
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "lilit@arev.am")
        # "Code locked" opens the dialog on the link the recipient holds, which keeps working.
        page.click(f"{row} [data-code-locked]")
        page.wait_for_selector("#link-dialog[open]")
        assert page.input_value("#link-url").endswith(held["path"])
        assert page.get_attribute("#link-code", "data-locked") == "true"
        page.click("#code-reset")
        wait_until(page, "document.querySelector('#link-code').dataset.locked === 'false'")
        assert requests.get(f"{url}/track/{held['token']}").status_code == 200
        screenshot(page, "console-link-in-force")
        # A new link is a separate action that asks first; keeping the link changes nothing.
        page.click("#link-new")
        page.wait_for_selector("#link-new-confirm:not([hidden])")
        page.click("#link-new-no")
        assert page.is_hidden("#link-new-confirm")
        assert requests.get(f"{url}/track/{held['token']}").status_code == 200
        page.click("#link-new")
        page.click("#link-new-yes")
        wait_until(page, f"!document.querySelector('#link-url').value.endsWith('{held['path']}')")
        fresh = page.input_value("#link-url")
        assert "/t/" in fresh
        assert requests.get(f"{url}/track/{held['token']}").status_code == 404
        assert requests.get(fresh.replace("/t/", "/track/")).status_code == 200
        page.click("#link-dialog button[type='submit']")
        # Opening it again shows the new link, and issues nothing.
        page.click(f"{row} [data-link]")
        page.wait_for_selector("#link-dialog[open]")
        assert page.input_value("#link-url") == fresh


def test_a_dispatcher_fails_or_delivers_for_a_courier_whose_phone_died_and_the_history_says_who(desk) -> None:
    url, dispatcher, courier, _ = desk
    lost = picked_up_order(url, dispatcher, courier)
    paid = picked_up_order(url, dispatcher, courier, isCod=True, amountAmd=3000)
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "lilit@arev.am")
        # Failed, with a reason.
        row = f"#orders tbody tr[data-order-id='{lost['id']}']"
        page.click(f"{row} [data-move='failed']")
        page.wait_for_selector("#fail-dialog[open]")
        page.select_option("#fd-reason", "wrong_address")
        page.click("#fail-send")
        page.wait_for_selector(f"{row}[data-status='failed']")
        failed = Order.get_by_id(lost["id"])
        assert failed.status == "failed" and failed.failure_reason == "wrong_address"

        # Delivered for the courier by the recipient's name; the cash is the courier's.
        row = f"#orders tbody tr[data-order-id='{paid['id']}']"
        page.click(f"{row} [data-move='delivered']")
        page.wait_for_selector("#behalf-dialog[open]")
        assert page.input_value("#bd-collected") == "3000"
        page.click("#behalf-send")  # neither code nor name: the API says what is missing
        wait_until(page, "document.querySelector('#behalf-error').textContent.length > 0")
        page.fill("#bd-name", "Gayane")
        screenshot(page, "console-deliver-for-courier")
        page.click("#behalf-send")
        page.wait_for_selector(f"{row}[data-status='delivered']")
        delivered = Order.get_by_id(paid["id"])
        assert delivered.proof_recipient_name == "Gayane" and delivered.collected_amount_amd == 3000
        assert requests.get(f"{url}/courier/cash", headers=courier.headers).json()["outstandingAmd"] == 3000

        # The history names the person and the role of every step, and the act for the courier.
        page.click(f"{row} [data-detail]")
        page.wait_for_selector("#detail-dialog[open]")
        steps = page.locator("#detail-audit li")
        wait_until(page, "document.querySelectorAll('#detail-audit li').length > 3")
        who = [
            (steps.nth(i).get_attribute("data-actor"), steps.nth(i).get_attribute("data-role"))
            for i in range(steps.count())
        ]
        assert set(who) == {("Lilit", "dispatcher"), ("Narek", "courier")}, who
        texts = [steps.nth(i).inner_text() for i in range(steps.count())]
        assert all("Lilit" in t or "Narek" in t for t in texts), texts
        assert "Lilit" in texts[-1] and "Narek" in texts[-1]  # delivered by the dispatcher for Narek
        screenshot(page, "console-history-names")


def test_the_courier_selector_says_who_is_on_shift_and_follows_the_shifts(desk) -> None:
    url, dispatcher, narek, armen = desk
    body = ORDER | {"pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]}}
    order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
    requests.post(f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers)
    assert requests.post(f"{url}/courier/shift/start", headers=armen.headers).status_code == 201
    select = f"select[data-assign='{order['id']}']"
    options = "els => els.map(e => [e.textContent, e.dataset.shift])"
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.wait_for_selector(f"{select} option[data-shift='active']", state="attached")
        listed = page.eval_on_selector_all(f"{select} option[value]:not([value=''])", options)
        assert [shift for _, shift in listed] == ["active", "off"]  # who can take it now, first
        assert listed[0][0].startswith("Armen · ") and listed[1][0].startswith("Narek · ")
        screenshot(page, "console-courier-selector-shifts")
        # Narek starts his shift: the selector follows (events stream), without a reload.
        assert requests.post(f"{url}/courier/shift/start", headers=narek.headers).status_code == 201
        page.wait_for_selector(
            f"{select} option[value='{narek.courier.id}'][data-shift='active']", state="attached"
        )


def test_cash_confirmation_lists_the_orders_behind_the_total_and_starts_empty(desk) -> None:
    url, dispatcher, courier, _ = desk
    paid = []
    for amount in (2500, 4000):
        order = picked_up_order(url, dispatcher, courier, isCod=True, amountAmd=amount)
        done = requests.post(
            f"{url}/courier/orders/{order['id']}/status",
            json={"status": "delivered", "recipientName": "Gayane"},
            headers=courier.headers,
        )
        assert done.status_code == 200, done.text
        paid.append(order)
    assert requests.post(f"{url}/courier/cash/settle", headers=courier.headers).status_code == 201
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.click("[data-view-tab='cash']")
        row = "#settlements tbody tr[data-settlement]"
        page.wait_for_selector(row)
        behind = page.inner_text(f"{row} [data-behind]")
        assert all(o["publicId"] in behind for o in paid) and "2,500" in behind and "4,000" in behind
        # Nothing is pre-filled: confirming needs the counted amount.
        assert page.input_value("[data-received]") == ""
        assert page.is_disabled("[data-confirm]")
        page.fill("[data-received]", "6500")
        assert page.is_enabled("[data-confirm]")
        screenshot(page, "console-cash-orders-behind")
        page.click("[data-confirm]")
        page.wait_for_selector("#confirmed li[data-confirmed]")
        assert requests.get(f"{url}/courier/cash", headers=courier.headers).json()["outstandingAmd"] == 0
