"""Proof of delivery in the courier app (issue 47), in a real Chromium against the real server: the
parcels scanned at the depot picked up in one request, then a delivery that needs the recipient's
signature and the parcel's scan made without signal and accepted once the signal returns.

The camera: the app's scanner reads the frames of a MediaStream in a <video>. Here that stream is
a canvas's (captureStream) showing a Code 39 label drawn by tests/e2e/barcodes.py, in place of the
phone's camera, which a test machine does not have; every frame goes through the app's own decode
(the vendored ZXing where the browser has no BarcodeDetector, as Chromium on Linux has none)."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order, OrderEvent
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.e2e.barcodes import FAKE_CAMERA, code39, data_url
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
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST


@pytest.fixture
def proof_app(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(
        app, company, "dispatcher", email="ani@arev.am", name="Ani", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hash_password(PASSWORD)
    )
    with serving(mapped_data_dir, port) as url:
        orders = []
        for ref, point, extra in (
            ("SHOP-123", ROAD_B, {"proofRequired": ["signature", "scan"]}),
            ("SHOP-456", ROAD_C, {}),
        ):
            body = ORDER | extra | {"externalRef": ref, "pin": {"lat": point[0], "lon": point[1]}}
            order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
            requests.post(
                f"{url}/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
            )
            assigned = requests.post(
                f"{url}/orders/{order['id']}/assign",
                json={"courierId": int(courier.courier.id)},
                headers=dispatcher.headers,
            )
            assert assigned.status_code == 201, assigned.text
            orders.append(order)
        yield url, dispatcher, orders


def test_the_app_reads_a_parcel_label_with_the_vendored_decoder(proof_app) -> None:
    url, _, _ = proof_app
    with chromium() as browser:
        page = courier_phone(browser, ROAD_A).new_page()
        page.goto(url + "/app/")
        sign_in_app(page, "narek@arev.am")
        read = page.evaluate(
            """async (url) => {
                const image = new Image(); image.src = url; await image.decode();
                return await window.courierApp.decode(image, {native: false});
            }""",
            data_url(code39("SHOP-123")),
        )
        assert read == "SHOP-123"
        blank = page.evaluate(
            """async () => {
                const canvas = document.createElement("canvas"); canvas.width = 200; canvas.height = 100;
                return await window.courierApp.decode(canvas, {native: false});
            }"""
        )
        assert blank is None


def test_parcels_scanned_at_the_depot_are_picked_up_then_one_is_delivered_offline_with_its_signature(
    proof_app,
) -> None:
    url, dispatcher, (first, second) = proof_app
    with chromium() as browser:
        context = courier_phone(browser, ROAD_A)
        page = context.new_page()
        page.goto(url + "/app/")
        sign_in_app(page, "narek@arev.am")
        page.click("[data-lang='en']")
        page.wait_for_selector(f"#run li[data-order-id='{second['id']}']")
        assert page.evaluate(FAKE_CAMERA)

        # At the depot: both labels in front of the camera, one after the other; one request.
        page.evaluate("(url) => window.showLabel(url)", data_url(code39("SHOP-123")))
        page.click("#pick-up-scan")
        page.wait_for_selector("#scan-list li[data-scanned='SHOP-123']")
        page.evaluate("(url) => window.showLabel(url)", data_url(code39("SHOP-456")))
        page.wait_for_selector("#scan-list li[data-scanned='SHOP-456']")
        assert page.locator("#scan-list li").count() == 2  # each label listed once
        screenshot(page, "courier-app-depot-scan")
        page.click("#scan-done")
        for order in (first, second):
            eventually(lambda order=order: Order.get_by_id(order["id"]).status == "picked_up")
            moves = OrderEvent.select().where(
                (OrderEvent.order == order["id"]) & (OrderEvent.to_status == "picked_up")
            )
            assert moves.count() == 1
        page.wait_for_selector(f"#run li[data-order-id='{first['id']}'][data-status='picked_up']")

        # No signal at the door: the recipient signs, the parcel is scanned; the move waits.
        context.set_offline(True)
        page.wait_for_selector("#net[data-online='false']")
        page.click(f"#run li[data-order-id='{first['id']}'] [data-move='delivered']")
        page.wait_for_selector("#deliver-dialog[open]")
        assert page.is_visible("#d-signature-box") and page.is_visible("#d-scan-box")
        page.click("#deliver-send")
        assert page.inner_text("#deliver-error") == "The recipient's signature is needed."
        box = page.locator("#d-signature").bounding_box()
        page.mouse.move(box["x"] + 20, box["y"] + 30)
        page.mouse.down()
        for step in range(1, 12):
            page.mouse.move(box["x"] + 20 + step * 25, box["y"] + 30 + (step % 3) * 30)
        page.mouse.up()
        page.evaluate("(url) => window.showLabel(url)", data_url(code39("SHOP-123")))
        page.click("#d-scan-camera")
        wait_until(page, "document.querySelector('#d-scan').value === 'SHOP-123'")
        screenshot(page, "courier-app-signature")
        page.click("#deliver-send")
        wait_until(page, "document.body.dataset.queuedMoves === '1'")
        assert Order.get_by_id(first["id"]).status == "picked_up"

        # The signal returns: the signature goes up, then the move carrying it, once.
        context.set_offline(False)
        wait_until(page, "document.body.dataset.queuedMoves === '0'")
        delivered = Order.get_by_id(first["id"])
        assert delivered.status == "delivered" and delivered.proof_scanned_code == "SHOP-123"
        assert delivered.proof_signature_key.endswith(".png")
        proof = requests.get(f"{url}/orders/{first['id']}/proof", headers=dispatcher.headers).json()
        signature = requests.get(proof["signature"]["url"])
        assert signature.headers["Content-Type"] == "image/png"
        assert signature.content.startswith(b"\x89PNG")

        # The dispatcher sees it: the signature, the scan and the proof in the order's history.
        office = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
        sign_in_console(office, url, "ani@arev.am")
        office.click("[data-lang='en']")
        office.click(f"[data-detail='{first['id']}']")
        office.wait_for_selector("#detail-signature:not([hidden])")
        wait_until(office, "document.querySelector('#detail-signature').naturalWidth === 600")
        fields = office.inner_text("#detail-fields")
        assert "SHOP-123" in fields and "signature, scan" in fields
        assert "proof: signature, scan, recipient's name" in office.inner_text("#detail-audit")
        screenshot(office, "console-order-proof")
