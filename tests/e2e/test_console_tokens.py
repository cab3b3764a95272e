"""Token rotation in the browser: with access tokens of a few seconds the console rotates its
refresh token again and again (never reusing one, which would end the session), keeps its stream
and its calls working, and an order at risk (the ETA past its window) is flagged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
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


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def short_tokens(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(
        app, company, "dispatcher", email="lilit@arev.am", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(app, company, "courier", name="Narek")
    with serving(mapped_data_dir, port, {"APPLIANCE_ACCESS_TOKEN_SECONDS": "6"}) as url:
        now = datetime.now(UTC)
        # A window that has already closed: whatever the courier's ETA, it is past the window.
        late = ORDER | {
            "pin": {"lat": ROAD_B[0], "lon": ROAD_B[1]},
            "deliveryWindowStart": _iso(now - timedelta(hours=2)),
            "deliveryWindowEnd": _iso(now - timedelta(minutes=5)),
        }
        order = requests.post(f"{url}/orders", json=late, headers=dispatcher.headers).json()["order"]
        path = f"{url}/orders/{order['id']}"
        requests.post(f"{path}/status", json={"status": "ready"}, headers=dispatcher.headers)
        assigned = requests.post(
            f"{path}/assign", json={"courierId": int(courier.courier.id)}, headers=dispatcher.headers
        )
        assert assigned.status_code == 201, assigned.text
        yield url, order, courier


def test_the_console_rotates_short_tokens_and_flags_an_order_at_risk(short_tokens) -> None:
    url, order, courier = short_tokens
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        refreshes: list[int] = []
        page.on("response", lambda r: refreshes.append(r.status) if r.url.endswith("/auth/refresh") else None)
        sign_in_console(page, url, "lilit@arev.am")
        row = f"#orders tbody tr[data-order-id='{order['id']}']"
        page.wait_for_selector(f"{row}[data-risk='true']")
        assert "At risk" in page.inner_text(row) or "Ուշանում" in page.inner_text(row)
        first = json.loads(page.evaluate("sessionStorage.getItem('appliance.session')"))["refreshToken"]

        # Access tokens of six seconds: the console rotates before each runs out, every rotation
        # accepted (a reused refresh token would be refused and end the session).
        for _ in range(600):
            if len(refreshes) >= 3:
                break
            page.wait_for_timeout(100)
        assert len(refreshes) >= 3 and set(refreshes) == {200}, refreshes
        assert (
            json.loads(page.evaluate("sessionStorage.getItem('appliance.session')"))["refreshToken"] != first
        )
        # The stream still delivers: a courier's move shows on the board.
        picked = requests.post(
            f"{url}/courier/orders/{order['id']}/status",
            json={"status": "picked_up"},
            headers=courier.headers,
        )
        assert picked.status_code == 200
        page.wait_for_selector(f"{row}[data-status='picked_up']", timeout=10000)
        # At risk and on its way: the late notice is one click away, ready to paste.
        page.click(f"{row} [data-late]")
        wait_until(page, "document.querySelector('#late-text').value.includes('/t/')")
        page.click("#link-dialog button[type='submit']")
        assert page.is_visible("body[data-view='workspace']")
        screenshot(page, "console-at-risk")
