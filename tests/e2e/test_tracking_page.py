"""The tracking page in a real browser (Debian's Chromium driven by Playwright) against the real
server: stage, arrival estimate, courier and destination markers on the map, and a screenshot."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status
from tests.e2e.console_server import ARTIFACTS, BROWSER_TEST, chromium, serving, wait_until
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = BROWSER_TEST


@pytest.fixture
def server(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    client = app.test_client()
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(app, company, "dispatcher")
    courier = make_member(app, company, "courier", name="Narek Hovhannisyan")
    order = assigned_order(
        client, dispatcher, courier, pin={"lat": ROAD_B[0], "lon": ROAD_B[1]}, otpRequired=True
    )
    client.post(
        "/courier/location",
        json={"points": [{"lat": ROAD_A[0], "lon": ROAD_A[1], "capturedAt": "2026-11-22T10:00:00Z"}]},
        headers=courier.headers,
    )
    courier_status(client, courier, order["id"], status="picked_up")
    token = client.post(f"/orders/{order['id']}/tracking", headers=dispatcher.headers).json["token"]
    # Issue 46: an order for a Russian-speaking recipient, with a window that opens in two hours.
    start = clock.now().replace(microsecond=0) + timedelta(hours=2)
    russian = assigned_order(
        client,
        dispatcher,
        courier,
        pin={"lat": ROAD_B[0], "lon": ROAD_B[1]},
        recipientLanguage="ru",
        deliveryWindowStart=start.isoformat(),
        deliveryWindowEnd=(start + timedelta(hours=3)).isoformat(),
    )
    courier_status(client, courier, russian["id"], status="picked_up")
    ru_token = client.post(f"/orders/{russian['id']}/tracking", headers=dispatcher.headers).json["token"]
    with serving(mapped_data_dir, port) as url:
        yield url, token, ru_token


def test_the_tracking_page_shows_stage_eta_and_the_map_markers(server) -> None:
    url, token, _ = server
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
        page.goto(f"{url}/t/{token}?lang=en")
        page.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        assert page.inner_text("#headline") == "On the way"
        assert page.is_visible("#eta") and "min" in page.inner_text("#eta")
        assert len(page.inner_text("#code").strip()) == 6
        # The map comes when the recipient asks for it, in the box kept for it.
        assert page.evaluate("typeof maplibregl") == "undefined"
        assert page.inner_text("#map-show") == "Show the courier on the map"
        page.click("#map-show")
        page.wait_for_selector("[data-marker='courier']", timeout=20000)
        page.wait_for_selector("[data-marker='destination']", timeout=20000)
        # Polled from outside: the page's Content-Security-Policy refuses wait_for_function's eval.
        wait_until(page, "window.trackingMap && window.trackingMap.tilesLoaded > 0", timeout=30)
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "tracking-page.png"), full_page=True)
        # Armenian first, Russian and English: by ?lang=, a remembered choice, or the browser.
        armenian = browser.new_page(locale="hy-AM")
        armenian.goto(f"{url}/t/{token}")
        armenian.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        assert armenian.inner_text("#headline") == "Ճանապարհին է"
        assert armenian.evaluate("document.documentElement.lang") == "hy"
        assert "րոպեից" in armenian.inner_text("#eta")
        armenian.click("[data-lang='ru']")
        assert armenian.inner_text("#headline") == "В пути" and "мин" in armenian.inner_text("#eta")
        armenian.reload()
        armenian.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        assert armenian.inner_text("#headline") == "В пути"  # the choice is remembered
        armenian.screenshot(path=str(ARTIFACTS / "tracking-page-ru.png"), full_page=True)
    assert (ARTIFACTS / "tracking-page.png").stat().st_size > 10000


def test_the_page_opens_in_the_recipients_language_and_shows_the_window(server) -> None:
    """Issue 46: a Russian-speaking recipient opening the link on an English phone reads Russian,
    and the estimate is shown against the window ("Доставка с 11:00 до 14:00, примерно в 11:00")."""
    url, _, ru_token = server
    with chromium() as browser:
        page = browser.new_page(locale="en-US")
        page.goto(f"{url}/t/{ru_token}")
        page.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        wait_until(page, "document.documentElement.lang === 'ru'", timeout=20)
        assert page.inner_text("#headline") == "В пути"
        eta = page.inner_text("#eta")
        assert re.fullmatch(r"Доставка с \d\d:\d\d до \d\d:\d\d(, примерно в \d\d:\d\d)?", eta), eta
        zoom_in = "document.querySelector('.maplibregl-ctrl-zoom-in')"
        assert page.inner_text("#map-show") == "Показать курьера на карте"
        page.click("#map-show")
        wait_until(page, f"window.trackingMap && {zoom_in}", timeout=30)
        assert page.evaluate(f"{zoom_in}.getAttribute('aria-label')") == "Приблизить"
        # Still switchable: the visitor's choice wins from then on, MapLibre's own buttons included.
        page.click("[data-lang='en']")
        assert page.inner_text("#headline") == "On the way" and page.inner_text("#eta").startswith("Between ")
        assert page.evaluate(f"{zoom_in}.getAttribute('aria-label')") == "Zoom in"
        page.reload()
        page.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        assert page.inner_text("#headline") == "On the way"
        # The map, asked for once on this device, comes back by itself when its box is in view.
        wait_until(page, f"window.trackingMap && {zoom_in}", timeout=30)
        assert page.evaluate(f"{zoom_in}.getAttribute('aria-label')") == "Zoom in"
