"""Issue 47's "Done when", one shop's day end to end, in a real Chromium against `appliance serve`
(its fiscal-receipts worker) and the mutual-TLS e-HDM test server (tests/dispatch/ehdm_server.py):

a shop's integration key (whose default proof is the recipient's signature and the parcel's scan)
creates a cash order with two item lines whose pin is in fee zone B (two zones drawn by the API;
B's fee differs from A's, so the fee proves the zone); the courier scans the label at the depot in
the app (the fake camera canvas of tests/e2e/test_courier_app_proof.py) and the order is picked up
in one request; the courier delivers it without signal, with the recipient's signature, the scan
and the cash; with the signal back the move is accepted. e-HDM prints the receipt and drops the
connection before its answer (its "drop" fault, a lost answer after the print): the manual gives a
print no reference of the caller's, so (docs/fiscal-receipts.md) the order is flagged for a
person, who records the receipt found on e-HDM through the decision endpoint; e-HDM then holds
exactly one receipt for the order, and its fiscal number is on the public tracking page. The
week's statement, read with the shop's key and in the console, shows the order, its fee and the
net, and its cash sums with the cash report of the same week.

Each proof kind (photo, signature, code, scan, name, age) refused on the server when missing is
tests/dispatch/test_proof_requirements.py::
test_each_required_proof_kind_is_refused_when_missing_and_accepted_when_present (one case a kind),
not repeated here."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
import requests

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order, OrderEvent
from appliance.dispatch.reports.service import YEREVAN
from tests.conftest import free_port
from tests.dispatch.ehdm_server import EhdmServer
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.dispatch.test_fiscal_receipts import CRN, ITEMS, credentials
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
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = BROWSER_TEST

LABEL = "SHOP-4701"
# Zone A holds the depot (ROAD_A), zone B the recipient (ROAD_B); they do not overlap.
ZONE_A = {
    "name": "A",
    "polygon": [
        {"lat": 40.170, "lon": 44.480},
        {"lat": 40.170, "lon": 44.499},
        {"lat": 40.185, "lon": 44.499},
        {"lat": 40.185, "lon": 44.480},
    ],
    "baseFeeAmd": 600,
}
ZONE_B = {
    "name": "B",
    "polygon": [
        {"lat": 40.185, "lon": 44.499},
        {"lat": 40.185, "lon": 44.520},
        {"lat": 40.200, "lon": 44.520},
        {"lat": 40.200, "lon": 44.499},
    ],
    "baseFeeAmd": 900,
}
GOODS_AMD = 2 * 1500 + 1000  # ITEMS: two kettles at 1500, half a unit at 2000
FEE_AMD = ZONE_B["baseFeeAmd"]  # B's rule is its base fee alone (no distance, weight or cash share)
COD_AMD = GOODS_AMD + FEE_AMD  # the recipient pays the goods and the delivery (feeOnReceipt)


@pytest.fixture
def shop_day(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port, ehdm_allow_private=True))
    company = make_company("Arev Express", depot=ROAD_A)
    hashed = hash_password(PASSWORD)
    owner = make_member(app, company, "owner", email="ani@arev.am", name="Ani", password_hash=hashed)
    courier = make_member(app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hashed)
    ehdm = EhdmServer().start()
    try:
        with serving(mapped_data_dir, port, {"APPLIANCE_EHDM_ALLOW_PRIVATE": "1"}) as url:
            yield url, owner, courier, ehdm
    finally:
        ehdm.stop()


def _call(url: str, method: str, path: str, headers: dict, body: dict | None = None, status: int = 200):
    answer = requests.request(method, url + path, json=body, headers=headers, timeout=20)
    assert answer.status_code == status, answer.text
    return answer


def _week() -> tuple[date, date]:
    """This Yerevan week, Monday to the next Monday (the statement's and the report's [from, to))."""
    today = clock.now().astimezone(YEREVAN).date()
    monday = today - timedelta(days=today.weekday())
    return monday, monday + timedelta(days=7)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def test_a_shops_order_is_scanned_delivered_offline_receipted_once_and_on_the_weeks_statement(
    shop_day,
) -> None:
    url, owner, courier, ehdm = shop_day
    boss = owner.headers

    # The company: two fee zones, e-HDM set up, and a shop whose key asks for a signature and a scan.
    zone_a = _call(url, "POST", "/company/fee-zones", boss, ZONE_A, 201).json()["zone"]
    zone_b = _call(url, "POST", "/company/fee-zones", boss, ZONE_B, 201).json()["zone"]
    assert zone_a["baseFeeAmd"] != zone_b["baseFeeAmd"]
    _call(url, "PUT", "/company/fiscal", boss, credentials(ehdm))
    _call(url, "POST", "/company/fiscal/activate", boss)
    made = _call(
        url,
        "POST",
        "/company/integration-keys",
        boss,
        {"name": "Shop Nairi", "proofRequired": ["signature", "scan"]},
        201,
    ).json()
    shop = {"Authorization": "Bearer " + made["key"]}

    # The shop's key creates the order: two item lines, cash on delivery, its pin in zone B.
    body = ORDER | {
        "externalRef": LABEL,
        "isCod": True,
        "amountAmd": GOODS_AMD,
        "codAmountAmd": COD_AMD,
        "items": ITEMS,
        "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]},
    }
    order = _call(url, "POST", "/orders", shop, body, 201).json()["order"]
    assert order["deliveryFeeAmd"] == FEE_AMD  # zone B's fee, not A's 600
    assert sorted(order["proofRequired"]) == ["scan", "signature"]
    assert order["shopId"] == made["id"] and order["codAmountAmd"] == COD_AMD
    _call(url, "POST", f"/orders/{order['id']}/status", boss, {"status": "ready"})
    _call(url, "POST", f"/orders/{order['id']}/assign", boss, {"courierId": int(courier.courier.id)}, 201)

    with chromium() as browser:
        phone = courier_phone(browser, ROAD_A)
        app = phone.new_page()
        errors: list[str] = []
        app.on("pageerror", lambda error: errors.append(str(error)))
        pick_ups: list[str] = []
        app.on(
            "request",
            lambda r: pick_ups.append(r.url) if r.method == "POST" and "/courier/orders/" in r.url else None,
        )
        app.goto(url + "/app/")
        sign_in_app(app, "narek@arev.am")
        app.click("[data-lang='en']")
        app.wait_for_selector(f"#run li[data-order-id='{order['id']}']")
        assert app.evaluate(FAKE_CAMERA)

        # At the depot: the label in front of the camera; the order is picked up in one request.
        app.evaluate("(url) => window.showLabel(url)", data_url(code39(LABEL)))
        app.click("#pick-up-scan")
        app.wait_for_selector(f"#scan-list li[data-scanned='{LABEL}']")
        app.click("#scan-done")
        eventually(lambda: Order.get_by_id(order["id"]).status == "picked_up")
        app.wait_for_selector(f"#run li[data-order-id='{order['id']}'][data-status='picked_up']")
        assert pick_ups == [url + "/courier/orders/pick-up"]
        picked = OrderEvent.select().where(
            (OrderEvent.order == order["id"]) & (OrderEvent.to_status == "picked_up")
        )
        assert picked.count() == 1

        # At the door, without signal: the recipient signs, the parcel is scanned, the cash taken.
        phone.set_offline(True)
        app.wait_for_selector("#net[data-online='false']")
        app.click(f"#run li[data-order-id='{order['id']}'] [data-move='delivered']")
        app.wait_for_selector("#deliver-dialog[open]")
        assert app.is_visible("#d-signature-box") and app.is_visible("#d-scan-box")
        assert app.input_value("#d-collected") == str(COD_AMD)
        box = app.locator("#d-signature").bounding_box()
        assert box is not None
        app.mouse.move(box["x"] + 20, box["y"] + 30)
        app.mouse.down()
        for step in range(1, 12):
            app.mouse.move(box["x"] + 20 + step * 25, box["y"] + 30 + (step % 3) * 30)
        app.mouse.up()
        app.evaluate("(url) => window.showLabel(url)", data_url(code39(LABEL)))
        app.click("#d-scan-camera")
        wait_until(app, f"document.querySelector('#d-scan').value === '{LABEL}'")
        ehdm.fault = "drop"  # e-HDM's next print is printed, then the connection closes unanswered
        app.click("#deliver-send")
        wait_until(app, "document.body.dataset.queuedMoves === '1'")
        assert Order.get_by_id(order["id"]).status == "picked_up"
        assert ehdm.printed(CRN) == []

        # Online again: the move (with its signature) is accepted.
        phone.set_offline(False)
        wait_until(app, "document.body.dataset.queuedMoves === '0'")
        delivered = Order.get_by_id(order["id"])
        assert delivered.status == "delivered" and delivered.collected_amount_amd == COD_AMD
        assert delivered.proof_scanned_code == LABEL and delivered.proof_signature_key.endswith(".png")
        screenshot(app, "shop-day-delivered")
        assert errors == []

        # The worker prints; the answer is lost; the order waits for a person's decision.
        def flagged() -> bool:
            seen = _call(url, "GET", f"/orders/{order['id']}", boss).json()["order"]
            return bool(seen["needsAttention"]) and seen["needsAttention"]["move"] == "fiscal_receipt"

        eventually(flagged, timeout=40)
        [printed] = ehdm.printed(CRN)
        assert printed["kind"] == "sale" and printed["summary"]["total"] == f"{COD_AMD}.00"
        assert [(i["goodName"], Decimal(i["price"])) for i in printed["items"]] == [
            (ITEMS[0]["name"], 1500),
            (ITEMS[1]["name"], 2000),
            ("Delivery", FEE_AMD),
        ]
        receipt = printed["summary"]
        decided = _call(
            url,
            "POST",
            f"/orders/{order['id']}/fiscal-receipts/decision",
            boss,
            {"outcome": "printed", "receiptId": receipt["receiptId"]},
        ).json()
        assert (decided["status"], decided["fiscalNumber"]) == ("printed", receipt["fiscal"])
        recorded = _call(url, "GET", f"/orders/{order['id']}", boss).json()["order"]
        assert recorded["fiscalReceipt"]["state"] == "printed" and not recorded["needsAttention"]
        assert recorded["fiscalReceipt"]["fiscalNumber"] == receipt["fiscal"]
        assert len(ehdm.printed()) == 1  # printed once, never again

        # The recipient's tracking page shows the receipt's fiscal number.
        token = _call(url, "POST", f"/orders/{order['id']}/tracking", boss, None, 201).json()["token"]
        tracking = browser.new_page(locale="en-US")
        tracking.goto(f"{url}/t/{token}?lang=en")
        tracking.wait_for_selector("body[data-stage='delivered']")
        tracking.wait_for_selector("#receipt-card:not([hidden])")
        assert "Fiscal receipt: " + receipt["fiscal"] in tracking.inner_text("#receipt-card")
        wait_until(tracking, "document.getElementById('receipt-qr').naturalWidth > 0")  # its QR drawn
        screenshot(tracking, "shop-day-tracking-receipt")

        # The week's statement: through the shop's own key, the order, its fee and the net.
        start, end = _week()
        statement = _call(url, "GET", f"/statements?from={start}&to={end}", shop).json()
        assert [
            (line["publicId"], line["codCollectedAmd"], line["feeAmd"], line["netAmd"])
            for line in statement["lines"]
        ] == [(order["publicId"], COD_AMD, FEE_AMD, COD_AMD - FEE_AMD)]
        assert (statement["delivered"], statement["codCollectedAmd"], statement["feesAmd"]) == (
            1,
            COD_AMD,
            FEE_AMD,
        )
        assert statement["netAmd"] == GOODS_AMD and statement["cash"]["balanced"]
        # ... and its cash sums with the cash report of the same week.
        report = _call(url, "GET", f"/reports/cash.csv?from={start}&to={end}", boss).text.lstrip("\ufeff")
        rows = list(csv.DictReader(io.StringIO(report)))
        collected = [int(r["amount_amd"]) for r in rows if r["kind"] == "collection"]
        assert [r["order"] for r in rows if r["kind"] == "collection"] == [order["publicId"]]
        assert sum(collected) == statement["codCollectedAmd"] == statement["cash"]["ledgerCollectedAmd"]

        # The same statement in the owner's console.
        office = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US").new_page()
        sign_in_console(office, url, "ani@arev.am")
        office.click("[data-lang='en']")
        office.click("[data-view-tab='money']")
        office.wait_for_selector("#money-view:not([hidden])")
        wait_until(office, "document.querySelectorAll('#st-shop option').length === 1")
        office.fill("#st-from", start.isoformat())
        office.fill("#st-to", (end - timedelta(days=1)).isoformat())  # the console asks the last day
        office.click("#st-show")
        office.wait_for_selector("#st-result:not([hidden])")
        assert office.text_content("#st-delivered") == "1"
        assert _digits(office.text_content("#st-fees") or "") == str(FEE_AMD)
        assert _digits(office.text_content("#st-net") or "") == str(GOODS_AMD)
        assert _digits(office.text_content("#st-collected") or "") == str(COD_AMD)
        screenshot(office, "shop-day-statement")
