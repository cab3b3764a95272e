"""Issue 28 in a real browser: the courier app and the console in the field. Nothing collected is
lost: a delivery queued without signal with a wrong code (and the cash taken) is refused when the
signal returns, stays on the courier's screen as "needs attention" with the reason and the cash in
hand, is flagged on the dispatcher's board, and the right code resolves it."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order, OrderEvent
from appliance.dispatch.orders import codes
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
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = BROWSER_TEST


@pytest.fixture
def field(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    company.phone = "+37410123456"  # the courier's "call the dispatcher"
    company.save()
    dispatcher = make_member(
        app, company, "dispatcher", email="lilit@arev.am", name="Lilit", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hash_password(PASSWORD)
    )
    master_key = app.extensions["dispatch"].master_key
    with serving(mapped_data_dir, port) as url:
        yield url, dispatcher, courier, master_key


def _coded_cod_order(url: str, dispatcher, courier) -> dict:
    body = ORDER | {
        "otpRequired": True,
        "isCod": True,
        "amountAmd": 6000,
        "recipientName": "Gayane",
        "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]},
    }
    order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
    requests.post(f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers)
    assigned = requests.post(
        f"{url}/orders/{order['id']}/assign",
        json={"courierId": int(courier.courier.id)},
        headers=dispatcher.headers,
    )
    assert assigned.status_code == 201, assigned.text
    return order


def test_a_delivery_refused_after_the_signal_returns_needs_attention_until_the_right_code(field) -> None:
    url, dispatcher, courier, master_key = field
    order = _coded_cod_order(url, dispatcher, courier)
    card = f"#run li[data-order-id='{order['id']}']"
    with chromium() as browser:
        phone = courier_phone(browser, ROAD_A).new_page()
        phone.goto(url + "/app/")
        sign_in_app(phone, "narek@arev.am")
        phone.click("[data-lang='en']")
        phone.click(f"{card} [data-move='picked_up']")
        phone.wait_for_selector(f"{card}[data-status='picked_up'][data-pending='false']")

        # No signal: the courier types a wrong code, takes the 6,000 and leaves.
        phone.context.set_offline(True)
        phone.wait_for_selector("#net[data-online='false']")
        phone.click(f"{card} [data-move='delivered']")
        phone.wait_for_selector("#deliver-dialog[open]")
        phone.fill("#d-code", "000000")
        phone.click("#deliver-send")
        phone.wait_for_selector(f"{card}[data-pending='true']")

        # The signal returns: the move is refused, and stays on screen with the reason.
        phone.context.set_offline(False)
        phone.wait_for_selector(f"{card}[data-attention='true'][data-pending='false']")
        wait_until(
            phone, "document.body.dataset.attentionMoves === '1' && document.body.dataset.queuedMoves === '0'"
        )
        reason = phone.get_attribute(f"{card} [data-attention-reason]", "data-attention-reason")
        assert reason == "Wrong code."
        assert "6,000" in phone.inner_text(f"{card} [data-held]")
        assert phone.get_attribute(f"{card} [data-call-dispatcher]", "href") == "tel:+37410123456"
        eventually(lambda: Order.get_by_id(order["id"]).attention_reason == "Wrong code.")
        flagged = Order.get_by_id(order["id"])
        assert flagged.status == "picked_up" and flagged.attention_held_amd == 6000
        screenshot(phone, "courier-app-needs-attention")

        # The cash in hand stays counted as the courier's.
        phone.click("[data-tab='cash']")
        phone.wait_for_selector("#cash-unrecorded:not([hidden])")
        assert "6,000" in phone.inner_text("#cash-unrecorded")
        phone.click("[data-tab='run']")

        # The dispatcher sees the order flagged, with the reason and the cash held.
        console = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(console, url, "lilit@arev.am")
        flag = f"#orders [data-attention='{order['id']}']"
        console.wait_for_selector(flag)
        assert "6,000" in console.inner_text(flag)
        assert console.inner_text(f"#orders [data-attention-reason='{order['id']}']").strip() == "Wrong code."
        screenshot(console, "console-needs-attention")

        # The courier enters the right code: delivered once, the cash recorded, the flag gone.
        code = codes.decrypt_code(master_key, flagged.public_id, flagged.otp_cipher)
        phone.click(f"{card} [data-move='delivered']")
        phone.wait_for_selector("#deliver-dialog[open]")
        assert phone.input_value("#d-collected") == "6000"
        phone.fill("#d-code", code)
        phone.click("#deliver-send")
        phone.wait_for_selector(card, state="detached")
        wait_until(phone, "document.body.dataset.attentionMoves === '0'")
        delivered = Order.get_by_id(order["id"])
        assert delivered.status == "delivered" and delivered.collected_amount_amd == 6000
        assert delivered.attention_at is None
        assert (
            OrderEvent.select()
            .where((OrderEvent.order == int(order["id"])) & (OrderEvent.to_status == "delivered"))
            .count()
            == 1
        )
        console.wait_for_selector(flag, state="detached")
        phone.click("[data-tab='cash']")
        # Both at once: the tab writes the outstanding sum, then reads the outbox for the rest.
        wait_until(
            phone,
            "document.querySelector('#cash-outstanding').textContent.includes('6,000')"
            " && document.querySelector('#cash-unrecorded').hidden",
        )


def test_a_new_assignment_reaches_the_courier_app_over_the_events_stream(field) -> None:
    url, dispatcher, courier, _ = field
    with chromium() as browser:
        phone = courier_phone(browser, ROAD_A).new_page()
        phone.goto(url + "/app/")
        sign_in_app(phone, "narek@arev.am")
        phone.wait_for_selector("body[data-stream='live']")
        phone.wait_for_selector("#no-run:not([hidden])")
        order = _coded_cod_order(url, dispatcher, courier)
        # The stop appears, brought by the stream (not the app's 30 s look, nor a reload).
        card = f"#run li[data-order-id='{order['id']}']"
        phone.wait_for_selector(card)
        assert phone.get_attribute(card, "data-arrived-by") == "stream"
        screenshot(phone, "courier-app-assignment-streamed")
