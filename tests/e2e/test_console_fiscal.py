"""Issue 47, fiscal receipts in a real browser against `appliance serve` (its fiscal-receipts worker)
and the mutual-TLS e-HDM test server: a print whose answer was lost flags the order; the
dispatcher records the receipt found on e-HDM from the order's detail, and later its return."""

from __future__ import annotations

import time

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.ehdm_server import EhdmServer
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.dispatch.test_fiscal_receipts import CRN, ITEMS, credentials
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    eventually,
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
    app = create_app(settings.replace(dispatch_port=port, ehdm_allow_private=True))
    company = make_company("Arev Express", depot=ROAD_A)
    owner = make_member(
        app, company, "owner", email="ani@arev.am", name="Ani", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(app, company, "courier", name="Narek")
    ehdm = EhdmServer().start()
    try:
        with serving(mapped_data_dir, port, {"APPLIANCE_EHDM_ALLOW_PRIVATE": "1"}) as url:
            yield url, owner, courier, ehdm
    finally:
        ehdm.stop()


def _order(url: str, member, order_id: str) -> dict:
    return requests.get(f"{url}/orders/{order_id}", headers=member.headers).json()["order"]


def _until(what, timeout: float = 60.0):
    """Wait for the served worker (a pass every 2 s) to have done something."""
    deadline = time.monotonic() + timeout
    while not (value := what()):
        assert time.monotonic() < deadline, "the worker did not get there"
        time.sleep(0.2)
    return value


def test_the_owner_sets_up_e_hdm_in_the_console_and_the_key_is_never_shown_back(desk) -> None:
    url, owner, _, ehdm = desk
    fields = credentials(ehdm)
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "ani@arev.am")
        page.click("[data-view-tab='company']")
        page.wait_for_selector("#fiscal-form:not([hidden])")
        page.fill("#f-url", fields["baseUrl"])
        page.fill("#f-crn", fields["crn"])
        page.fill("#f-cashier", "3")
        page.fill("#f-adg", fields["adgCode"])
        page.fill("#f-cert", fields["certificatePem"])
        page.fill("#f-key", fields["privateKeyPem"])
        page.fill("#f-ca", fields["serverCaPem"])
        page.click("#fiscal-form button[type='submit']")
        page.wait_for_selector("#fiscal-cert:not(:empty)")
        assert page.input_value("#f-key") == "" and page.input_value("#f-cert").startswith(
            "-----BEGIN CERTIFICATE"
        )
        page.click("#fiscal-activate")
        # Activated and its departments configured on the server (the save's toast may still be up,
        # so the toast alone proves nothing).
        eventually(lambda: CRN in ehdm.registers and ehdm.registers[CRN].departments == {1: 1})
        page.wait_for_selector("#toast:not([hidden])")
        assert page.inner_text("#fiscal-error") == ""
        assert "PRIVATE KEY" not in page.content()
        screenshot(page, "console-fiscal-settings")
        # Every word of the form exists in Armenian and Russian.
        missing = page.evaluate(
            """async () => {
                const {TEXTS} = await import('/console/texts.js');
                const keys = [...document.querySelectorAll('#fiscal-form [data-t]')].map((e) => e.dataset.t);
                return ['hy', 'ru'].flatMap((l) => keys.filter((k) => !TEXTS[l][k]).map((k) => l + ':' + k));
            }"""
        )
        assert missing == []
    saved = requests.get(f"{url}/company/fiscal", headers=owner.headers).json()["settings"]
    assert saved["crn"] == CRN and saved["cashierId"] == 3 and saved["hasPrivateKey"]
    assert ehdm.registers[CRN].activated and ehdm.registers[CRN].departments == {1: 1}


def test_a_lost_print_is_recorded_from_the_console_and_the_return_printed_once(desk) -> None:
    url, owner, courier, ehdm = desk
    assert (
        requests.put(f"{url}/company/fiscal", json=credentials(ehdm), headers=owner.headers).status_code
        == 200
    )
    assert requests.post(f"{url}/company/fiscal/activate", headers=owner.headers).status_code == 200
    body = ORDER | {
        "isCod": True,
        "amountAmd": 4000,
        "items": ITEMS,
        "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]},
    }
    order = requests.post(f"{url}/orders", json=body, headers=owner.headers).json()["order"]
    requests.post(f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=owner.headers)
    requests.post(
        f"{url}/orders/{order['id']}/assign",
        json={"courierId": int(courier.courier.id)},
        headers=owner.headers,
    )
    moves = f"{url}/courier/orders/{order['id']}/status"
    assert requests.post(moves, json={"status": "picked_up"}, headers=courier.headers).status_code == 200
    ehdm.fault = "drop"  # e-HDM prints, then the connection closes before its answer
    assert requests.post(moves, json={"status": "delivered"}, headers=courier.headers).status_code == 200
    flagged = _until(lambda: (o := _order(url, owner, order["id"]))["needsAttention"] and o)
    assert flagged["needsAttention"]["move"] == "fiscal_receipt"
    [printed] = ehdm.printed(CRN)
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        sign_in_console(page, url, "ani@arev.am")
        page.click(f"[data-detail='{order['id']}']")
        page.wait_for_selector(f"[data-fiscal-receipt-id='{order['id']}']")
        page.fill(f"[data-fiscal-receipt-id='{order['id']}']", printed["summary"]["receiptId"])
        page.click(f"[data-fiscal-found='{order['id']}']")
        page.wait_for_selector("#detail-fields [data-fiscal='printed']")
        assert printed["summary"]["fiscal"] in page.inner_text("#detail-fields [data-fiscal='printed']")
        screenshot(page, "console-fiscal-recorded")
        # The recipient's tracking page shows the receipt's number and links its QR text…
        token = requests.post(f"{url}/orders/{order['id']}/tracking", headers=owner.headers).json()["token"]
        tracking = browser.new_page(locale="en-US")
        tracking.goto(f"{url}/t/{token}?lang=en")
        tracking.wait_for_selector("body[data-stage='delivered']", timeout=20000)
        tracking.wait_for_selector("#receipt-card:not([hidden])")
        card = tracking.inner_text("#receipt-card")
        assert "Fiscal receipt: " + printed["summary"]["fiscal"] in card
        assert tracking.get_attribute("#receipt-card a", "href") == printed["summary"]["qr"]
        # …and draws the QR itself, loaded under the page's CSP, to scan as from a paper receipt.
        wait_until(tracking, "document.getElementById('receipt-qr').naturalWidth > 0")
        assert tracking.get_attribute("#receipt-qr", "alt") == "The receipt's QR code"
        # Every word of the receipt's cell exists in Armenian, Russian and English.
        missing = page.evaluate(
            """async () => {
                const {TEXTS} = await import('/console/texts.js');
                const keys = Object.keys(TEXTS.en).filter((k) => /^(fiscal|audit_fiscal)/.test(k));
                return keys.length < 14 ? ['too few'] :
                    ['hy', 'ru'].flatMap((l) => keys.filter((k) => !TEXTS[l][k]).map((k) => l + ':' + k));
            }"""
        )
        assert missing == []
        page.click(f"[data-fiscal-return='{order['id']}']")
        page.wait_for_selector("#detail-fields [data-fiscal='returning']")
    _until(lambda: _order(url, owner, order["id"])["fiscalReceipt"]["state"] == "returned")
    assert len(ehdm.printed(CRN, "sale")) == 1 and len(ehdm.printed(CRN, "return")) == 1
