"""The tracking page in a real browser (Debian's Chromium driven by Playwright) against the real
server: stage, arrival estimate, courier and destination markers on the map, and a screenshot."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status
from tests.e2e.console_server import wait_until
from tests.geo_fixtures import ROAD_A, ROAD_B

pytestmark = [pytest.mark.e2e, pytest.mark.server]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--only",
            "dispatch",
            "--data-dir",
            str(mapped_data_dir),
            "--dispatch-port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{url}/openapi.json", timeout=2)
            break
        except requests.ConnectionError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise AssertionError("the server did not start") from None
            time.sleep(0.2)
    yield url, token
    process.terminate()
    process.wait(20)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_tracking_page_shows_stage_eta_and_the_map_markers(server) -> None:
    from playwright.sync_api import sync_playwright

    url, token = server
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
        page.goto(f"{url}/t/{token}")
        page.wait_for_selector("body[data-stage='picked_up']", timeout=20000)
        assert page.inner_text("#headline") == "On the way"
        assert page.is_visible("#eta") and "min" in page.inner_text("#eta")
        assert len(page.inner_text("#code").strip()) == 6
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
        browser.close()
    assert (ARTIFACTS / "tracking-page.png").stat().st_size > 10000
