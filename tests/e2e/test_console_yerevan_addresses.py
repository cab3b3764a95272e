"""Issue 46 in a real browser against the real server, in Armenian and Russian: the order form's
address search finds one house typed five ways (Armenian, Russian, ALA-LC, BGN/PCGN, everyday
Latin, with street words and an apartment) on the Yerevan-named sample streets; an import with
Armenian headers shows its problems in Armenian naming the sheet's headers, keeps the row it
cannot place as a draft that needs a pin, and the pin is dropped on the map."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.geocoding.build import INDEX_NAME, build_index
from appliance.dispatch.models import Order
from appliance.sample.yerevan_names import TARGET
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.e2e.console_server import BROWSER_TEST, PASSWORD, chromium, serving, sign_in_console, wait_until
from tests.e2e.test_console_address_search import _open_form, _search

pytestmark = BROWSER_TEST
TUMANYAN_5 = "Թումանյան փողոց 5"
FIVE_WAYS = [
    "Թումանյան փ. 5",  # Armenian, the street word abbreviated
    "ул. Туманяна 5",  # Russian
    "Tʻumanyan pʻoghotsʻ 5",  # ALA-LC
    "T’umanyan 5, bn. 12",  # BGN/PCGN, an apartment
    "Tumanyan str. 5/12",  # everyday Latin, the apartment after a slash
]


@pytest.fixture
def yerevan(data_dir: Path, map_tiles: Path, settings):
    """The sample streets' address index (no road graph: the search needs none) and map tiles."""
    (data_dir / "routing" / "current").mkdir(parents=True)
    build_index(TARGET, data_dir / "routing" / "current" / INDEX_NAME)
    (data_dir / "tiles.mbtiles").symlink_to(map_tiles)
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=(40.1776, 44.5126))
    make_member(app, company, "dispatcher", email="lilit@arev.am", password_hash=hash_password(PASSWORD))
    with serving(data_dir, port) as url:
        yield url


@pytest.mark.parametrize("language", ["hy", "ru"])
def test_the_order_forms_search_finds_a_house_typed_five_ways(yerevan, language) -> None:
    with chromium() as browser:
        page = browser.new_context(
            viewport={"width": 1400, "height": 1000}, locale=f"{language}-AM"
        ).new_page()
        answers: list = []
        page.on("response", lambda r: answers.append(r) if "/geo/search?" in r.url else None)
        sign_in_console(page, yerevan, "lilit@arev.am")
        page.click(f"[data-lang='{language}']")
        _open_form(page)
        for query in FIVE_WAYS:
            index, found = _search(page, answers, query, TUMANYAN_5)
            assert index == 0, query  # the house itself, first
            assert found["apartment"] == ("12" if "12" in query else None)


HY_SHEET = (
    "Պատվերի համար,Ստացող,Հեռախոս,Գումար,Հասցե,Առաքման ժամ\n"
    'A-1,Անի,091123456,5000,"Աբովյան փ. 10, բն. 12",14:00-16:00\n'
    "A-2,Արամ,12,5000,Abovyan 10,\n"
    "A-3,Աննա,091123458,հինգ հազար,Abovyan 10,\n"
    "A-4,Արև,091123459,5000,Abovyan 10,25:00\n"
    "A-5,Գոհար,091123450,5000,Nowhere street 1,\n"
)


def test_an_armenian_import_reads_armenian_and_its_unplaceable_row_is_badged_filtered_and_pinned_on_the_map(
    yerevan,
) -> None:
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="hy-AM").new_page()
        sign_in_console(page, yerevan, "lilit@arev.am")
        page.click("[data-lang='hy']")
        page.click("#import-orders")
        page.wait_for_selector("#import-dialog[open]")
        page.set_input_files(
            "#import-file",
            files=[{"name": "orders.csv", "mimeType": "text/csv", "buffer": HY_SHEET.encode()}],
        )
        page.wait_for_selector("#import-problems:not([hidden]) tbody tr")
        rows = page.locator("#import-problems tbody tr").all_inner_texts()
        assert any("Հեռախոս" in r and "անվավեր հեռախոսահամար" in r for r in rows), rows
        assert any("Գումար" in r and "սպասվում էր ամբողջ գումար" in r for r in rows), rows
        assert any("Առաքման ժամ" in r and "օրվա ժամ չէ" in r for r in rows), rows
        assert any("Հասցե" in r and "կետ է պետք" in r for r in rows), rows
        page.click("#import-confirm")
        wait_until(page, "document.querySelector('#import-summary').textContent.includes('2')")
        page.click("#import-close")

        # The kept draft: badged on its row, counted, listed with its reason when pressed (the board
        # then shows it alone), its pin dropped on the map.
        page.wait_for_selector("#pin-needed:not([hidden])")
        assert page.inner_text("#pin-needed-toggle").endswith("1")
        draft_id = str(Order.get(Order.external_ref == "A-5").id)
        badges = page.locator("#orders tbody [data-needs-pin]")
        assert badges.count() == 1 and badges.get_attribute("data-needs-pin") == draft_id
        assert badges.inner_text() == "Կետ է պետք"
        assert page.locator("#orders tbody tr").count() == 2
        page.click("#pin-needed-toggle")
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 1")
        assert page.get_attribute("#orders tbody tr", "data-order-id") == draft_id
        item = page.locator("#pin-needed-list li")
        assert "Nowhere street 1" in item.inner_text()
        item.locator("button").click()
        page.wait_for_selector("#order-dialog[open]")
        wait_until(page, "window.pinPicker && window.pinPicker.map.loaded()", timeout=30)
        page.click("#pin-map", position={"x": 140, "y": 110})
        page.click("#order-save")
        wait_until(page, "!document.querySelector('#order-dialog').open")
        page.wait_for_selector("#pin-needed[hidden]", state="attached")
        # No order needs a pin any more: the whole day again, and no badge.
        wait_until(page, "document.querySelectorAll('#orders tbody tr').length === 2")
        assert page.locator("#orders tbody [data-needs-pin]").count() == 0
        order = Order.get(Order.external_ref == "A-5")
        assert order.pin_needed is None and order.status == "draft"
