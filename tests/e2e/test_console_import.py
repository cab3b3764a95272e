"""Issue 27 in a real browser against the real server: the console's Import (choose or drop a
file, a preview with every refused row, then confirm), the order form's door details, note and
shop number, and the courier app's stop showing them."""

from __future__ import annotations

import base64

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Order
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.import_helpers import HEADER, csv_bytes, row, xlsx_bytes
from tests.dispatch.orders_helpers import ORDER
from tests.e2e.console_server import (
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
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST


@pytest.fixture
def served(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(
        app, company, "dispatcher", email="lilit@arev.am", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(
        app, company, "courier", email="narek@arev.am", name="Narek", password_hash=hash_password(PASSWORD)
    )
    with serving(mapped_data_dir, port) as url:
        yield url, dispatcher, courier


def _rows() -> list[list[object]]:
    good = [row(n, lat=ROAD_B[0], lon=ROAD_B[1]) for n in (1, 2, 3)]
    bad = row(4, recipientPhone="12", lat=ROAD_C[0], lon=ROAD_C[1])  # row 5 of the file
    return [HEADER, *[list(r.values()) for r in [*good, bad]]]


def _drop(page, name: str, data: bytes, mime: str) -> None:
    """Drop a file on the import dialog's drop zone, as a person dragging it from their desktop."""
    page.evaluate(
        """([name, b64, mime]) => {
            const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], name, {type: mime}));
            document.getElementById("import-drop").dispatchEvent(
                new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
        }""",
        [name, base64.b64encode(data).decode(), mime],
    )


def test_a_dispatcher_previews_an_import_with_every_problem_then_confirms(served, tmp_path) -> None:
    url, _, _ = served
    workbook = tmp_path / "orders.xlsx"
    workbook.write_bytes(xlsx_bytes(_rows()))
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.click("[data-lang='en']")
        page.click("#import-orders")
        page.wait_for_selector("#import-dialog[open]")
        page.set_input_files("#import-file", str(workbook))
        page.wait_for_selector("#import-problems tbody tr[data-row='5']")
        summary = page.inner_text("#import-summary")
        assert "To create: 3" in summary and "rows refused: 1" in summary
        problem = page.inner_text("#import-problems tbody tr[data-row='5']")
        assert "recipientPhone" in problem and "not a valid phone number" in problem
        assert Order.select().count() == 0  # the preview is a dry run
        screenshot(page, "console-import-preview")

        page.click("#import-confirm")
        wait_until(page, "document.querySelectorAll('#orders tbody tr[data-status=ready]').length === 3")
        assert sorted(o.external_ref for o in Order.select()) == ["SHOP-1", "SHOP-2", "SHOP-3"]
        # The streamed reload can show the rows before the confirm's answer writes the summary.
        wait_until(page, "document.querySelector('#import-summary').textContent.includes('Imported: 3')")

        # The same orders dropped again as CSV: all already there, nothing to confirm.
        page.click("#import-close")
        page.click("#import-orders")
        data = csv_bytes([dict(zip(HEADER, values, strict=True)) for values in _rows()[1:4]])
        _drop(page, "orders.csv", data, "text/csv")
        wait_until(page, "document.getElementById('import-summary').textContent.includes('already there: 3')")
        assert page.is_disabled("#import-confirm")
        assert Order.select().count() == 3

        # A file that is not an order list is explained, not imported.
        _drop(page, "notes.txt", b"colour,size\nred,big\n", "text/plain")
        page.wait_for_selector("#import-error:has-text('colour')")
        assert page.is_disabled("#import-confirm")


def test_the_order_form_keeps_door_details_note_and_shop_number_and_the_courier_sees_them(served) -> None:
    url, dispatcher, courier = served
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.click("[data-lang='en']")
        page.click("#new-order")
        page.wait_for_selector("#order-dialog[open]")
        wait_until(page, "window.pinPicker && window.pinPicker.map.loaded()", timeout=30)
        page.fill("#o-name", "Gayane Petrosyan")
        page.fill("#o-phone", "+37491123456")
        page.fill("#o-addr-hy", "Աբովյան 10")
        page.fill("#o-entrance", "2")
        page.fill("#o-floor", "5")
        page.fill("#o-apartment", "17")
        page.fill("#o-intercom", "17K")
        page.fill("#o-note", "Call before coming up")
        page.fill("#o-ref", "SHOP-77")
        page.fill("#o-lat", str(ROAD_B[0]))
        page.fill("#o-lon", str(ROAD_B[1]))
        page.click("#order-save")
        page.wait_for_selector("#orders tbody tr[data-status='ready']")
        order = Order.get()
        door = (order.address_entrance, order.address_floor, order.address_apartment, order.address_intercom)
        assert door == ("2", "5", "17", "17K")
        assert order.note_to_courier == "Call before coming up" and order.external_ref == "SHOP-77"
        page.click(f"[data-detail='{order.id}']")
        page.wait_for_selector("#detail-dialog[open]")
        fields = page.inner_text("#detail-fields")
        assert "Entrance 2 · Floor 5 · Apartment 17 · Intercom 17K" in fields and "SHOP-77" in fields
        # An edit clears the door details.
        page.click("#detail-edit")
        page.wait_for_selector("#order-dialog[open]")
        assert page.input_value("#o-floor") == "5"
        for field in ("#o-entrance", "#o-floor", "#o-apartment", "#o-intercom"):
            page.fill(field, "")
        page.click("#order-save")
        page.wait_for_selector("#order-dialog", state="hidden")
        order = Order.get()
        assert order.address_floor is None and order.note_to_courier == "Call before coming up"

        assigned = requests.post(
            f"{url}/orders/{order.id}/assign",
            json={"courierId": courier.courier.id},
            headers=dispatcher.headers,
        )
        assert assigned.status_code == 201, assigned.text
        other = requests.post(
            f"{url}/orders",
            json=ORDER | {"addressDetails": {"floor": "3", "intercom": "31"}, "noteToCourier": "Dog"},
            headers=dispatcher.headers,
        ).json()["order"]
        requests.post(
            f"{url}/orders/{other['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
        )
        requests.post(
            f"{url}/orders/{other['id']}/assign",
            json={"courierId": courier.courier.id},
            headers=dispatcher.headers,
        )

        phone = courier_phone(browser, ROAD_A).new_page()
        phone.goto(url + "/app/")
        phone.wait_for_selector("body[data-view='signin']")
        sign_in_app(phone, "narek@arev.am")
        phone.click("[data-lang='en']")
        phone.wait_for_selector(f"#run li[data-order-id='{other['id']}'] [data-door]")
        assert (
            phone.inner_text(f"#run li[data-order-id='{other['id']}'] [data-door]") == "Floor 3 · Intercom 31"
        )
        assert phone.inner_text(f"#run li[data-order-id='{other['id']}'] [data-note]") == "Note: Dog"
        assert phone.is_hidden(f"#run li[data-order-id='{order.id}'] [data-door]")
        assert (
            phone.inner_text(f"#run li[data-order-id='{order.id}'] [data-note]")
            == "Note: Call before coming up"
        )
        screenshot(phone, "courier-app-door-details")


def test_an_open_console_reloads_the_day_once_for_an_import_instead_of_a_request_per_order(served) -> None:
    import re

    url, dispatcher, _ = served
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US").new_page()
        sign_in_console(page, url, "lilit@arev.am")
        wait_until(page, "document.getElementById('no-orders').hidden === false")
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        data = csv_bytes([row(n, lat=ROAD_B[0], lon=ROAD_B[1]) for n in range(1, 41)])
        answer = requests.post(
            f"{url}/orders/import",
            data=data,
            headers={**dispatcher.headers, "Content-Type": "text/csv"},
            timeout=60,
        )
        assert answer.status_code == 200 and answer.json()["created"] == 40
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 40")
        assert not [u for u in asked if re.search(r"/orders/\d+$", u)]
        assert [u for u in asked if "/orders?date=" in u]
