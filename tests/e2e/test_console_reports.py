"""The console's Reports view in a real browser against the real server (issue 28 item 4): the
range defaults to this Yerevan week, the figures of a hand-counted day equal the API's summary, the
downloads carry the bearer token and arrive under the server's filename, and a reversed range shows
the API's Problem."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.test_reports import build_day
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
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST

# build_day's orders are all created and finished on 2026-11-20 (Yerevan).
DAY = "2026-11-20"


@pytest.fixture
def reports(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    dispatcher = make_member(
        app, company, "dispatcher", email="lilit@arev.am", password_hash=hash_password(PASSWORD)
    )
    aram, _boris = build_day(app, company)
    with serving(mapped_data_dir, port) as url:
        yield url, dispatcher, aram.courier


def _yerevan_week() -> tuple[str, str]:
    today = dt.datetime.now(ZoneInfo("Asia/Yerevan")).date()
    monday = today - dt.timedelta(days=today.weekday())
    return monday.isoformat(), (monday + dt.timedelta(days=6)).isoformat()


def _cells(page, row: str) -> list[str]:
    return page.eval_on_selector_all(f"{row} td", "cells => cells.map(c => c.dataset.value ?? c.textContent)")


def test_the_reports_view_shows_the_days_figures_and_downloads_the_reports(reports) -> None:
    url, dispatcher, aram = reports
    # The page sends the day after the last day shown: [from, to).
    summary = requests.get(
        f"{url}/reports/summary", params={"from": DAY, "to": "2026-11-21"}, headers=dispatcher.headers
    ).json()
    assert (summary["deliveries"], summary["failures"]) == (70, 20)
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
        page = context.new_page()
        sign_in_console(page, url, "lilit@arev.am")
        page.click("[data-lang='en']")
        page.click("[data-view-tab='reports']")
        # The range starts as this week in Yerevan, Monday to Sunday, both shown as included.
        assert (page.input_value("#r-from"), page.input_value("#r-to")) == _yerevan_week()
        first, last = _yerevan_week()
        end = (dt.date.fromisoformat(last) + dt.timedelta(days=1)).isoformat()
        wait_until(page, f"document.getElementById('r-summary').dataset.loaded === '{first}/{end}'")

        page.fill("#r-from", DAY)
        page.fill("#r-to", DAY)
        page.click("#r-show")
        wait_until(page, f"document.getElementById('r-summary').dataset.loaded === '{DAY}/2026-11-21'")
        assert page.inner_text("#r-deliveries") == str(summary["deliveries"])
        assert page.inner_text("#r-failures") == str(summary["failures"])
        rate = round(summary["onTimeRate"] * 100, 1)
        assert page.inner_text("#r-ontime") == f"{rate:g}%"

        figures = next(c for c in summary["couriers"] if c["courierId"] == aram.id)
        row = f"#r-couriers tbody tr[data-courier-id='{aram.id}']"
        name, deliveries, failures, reasons, on_time, minutes = _cells(page, row)
        assert name == figures["courier"] == "Արամ"
        assert (int(deliveries), int(failures)) == (figures["deliveries"], figures["failures"])
        assert float(on_time) == figures["onTimeRate"]
        assert float(minutes) == figures["averagePickupToDeliveryMinutes"] == 30
        # Reasons are named in the console's words ("Wrong address", "Nobody there").
        # (Aram has the even orders: his failures are all wrong addresses, Boris's all recipient_absent.)
        assert figures["failuresByReason"] == {"wrong_address": 10}
        assert reasons == "Wrong address: 10"
        boris = next(c for c in summary["couriers"] if c["courierId"] != aram.id)
        boris_row = f"#r-couriers tbody tr[data-courier-id='{boris['courierId']}']"
        assert _cells(page, boris_row)[3] == "Nobody there: 10"
        assert page.locator("#r-couriers tbody tr").count() == len(summary["couriers"]) == 2
        # Two bars per courier, deliveries then failures, at the summary's values.
        bars = page.eval_on_selector_all(
            "#r-chart svg rect[data-value]", "bars => bars.map(b => +b.dataset.value)"
        )
        assert bars == [v for c in summary["couriers"] for v in (c["deliveries"], c["failures"])]
        screenshot(page, "console-reports")

        # The orders CSV: fetched with the token, saved under the server's name, with the BOM and
        # one row per order created in the day (100) under the header.
        with page.expect_download() as caught:
            page.click("#r-downloads [data-report='orders'][data-format='csv']")
        download = caught.value
        assert download.suggested_filename == f"orders-{DAY}-2026-11-21.csv"
        content = Path(download.path()).read_bytes()
        assert content.startswith(b"\xef\xbb\xbf")
        rows = list(csv.reader(io.StringIO(content.decode("utf-8-sig"))))
        assert len(rows) == 1 + 100
        with page.expect_download() as caught:
            page.click("#r-downloads [data-report='couriers'][data-format='xlsx']")
        xlsx = caught.value
        assert xlsx.suggested_filename == f"couriers-{DAY}-2026-11-21.xlsx"
        assert Path(xlsx.path()).read_bytes()[:2] == b"PK"

        # A reversed range is the API's 422, shown as its Problem: for a download (the page saves
        # only an answer that is ok) and for the figures, which are cleared.
        page.fill("#r-from", "2026-11-22")
        page.click("#r-downloads [data-report='cash'][data-format='csv']")
        wait_until(page, "document.getElementById('r-error').textContent.length > 0")
        assert "range" in page.inner_text("#r-error")
        page.evaluate("document.getElementById('r-error').textContent = ''")
        page.click("#r-show")
        wait_until(page, "document.getElementById('r-error').textContent.length > 0")
        assert page.inner_text("#r-deliveries") == ""
        assert page.locator("#r-couriers tbody tr").count() == 0

        # Every word of the view exists in Armenian, Russian and English.
        missing = page.evaluate(
            """async () => {
                const {TEXTS} = await import('/console/texts.js');
                const keys = [...document.querySelectorAll('#reports-view [data-t], [data-view-tab=reports]')]
                    .map((e) => e.dataset.t).concat(['repRangeMissing']);
                return ['hy', 'ru', 'en'].flatMap(
                    (l) => keys.filter((k) => !TEXTS[l][k]).map((k) => l + ':' + k));
            }"""
        )
        assert missing == []
        page.click("[data-lang='hy']")
        assert page.inner_text("[data-view-tab='reports']") == "Հաշվետվություններ"
        # Issue 46: the server's own Problem reads in the user's language once they chose it
        # (PATCH /me), though the browser says English: a reversed range, in Armenian.
        lilit = User.get(User.email == "lilit@arev.am")
        eventually(lambda: User.get_by_id(lilit.id).language == "hy")
        page.fill("#r-from", "2026-11-22")
        page.evaluate("document.getElementById('r-error').textContent = ''")
        page.click("#r-show")
        wait_until(page, "document.getElementById('r-error').textContent.length > 0")
        assert "«to»-ն պետք է լինի «from»-ից հետո" in page.inner_text("#r-error")
