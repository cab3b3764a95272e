"""axe-core (pinned, from the npm registry: `make setup` puts it in .tools) in Debian's Chromium on
the pages people use (issue 49): the tracking page, the sign-in screens, the console's day board
and the courier app's run, in Armenian, Russian and English, on a phone and on a desktop. No
serious or critical violation on any of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.console_server import BROWSER_TEST, PASSWORD, chromium, courier_phone, sign_in_app, wait_until
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(os.environ.get("AXE_CORE_JS") or ROOT / ".tools" / "node_modules" / "axe-core" / "axe.min.js")
LANGUAGES = ("hy", "ru", "en")
DESKTOP = {"width": 1280, "height": 900}
# The landmarks' names follow the language too (the console's view tabs, the courier app's menu).
VIEWS = {"hy": "Բաժիններ", "ru": "Разделы", "en": "Views"}
MENU = {"hy": "Ընտրացանկ", "ru": "Меню", "en": "Menu"}


def _axe(page, where: str) -> list[str]:
    """The serious and critical violations axe finds on the page as it is now, one line each."""
    page.evaluate(AXE.read_text())
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    found = []
    for violation in results["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = [" ".join(map(str, node["target"])) for node in violation["nodes"][:4]]
            found.append(
                f"{where}: {violation['id']} ({violation['impact']}): {violation['help']} at {targets}"
            )
    return found


def _choose(page, lang: str) -> None:
    page.click(f"[data-lang='{lang}']")
    wait_until(page, f"document.documentElement.lang === '{lang}'")


@pytest.fixture
def axe_ready():
    if not AXE.exists():
        pytest.skip("axe-core is not installed: `make setup` installs it from the npm registry (needs npm)")


def test_the_tracking_page_and_the_sign_in_screens_have_no_serious_violation(pages_demo, axe_ready) -> None:
    url, token = pages_demo["url"], pages_demo["token"]
    found: list[str] = []
    with chromium() as browser:
        phone = courier_phone(browser, ROAD_A, bypass_csp=True)  # axe is put in by the test
        desktop = browser.new_context(viewport=DESKTOP, bypass_csp=True)
        for lang in LANGUAGES:
            for context, size in ((phone, "phone"), (desktop, "desktop")):
                page = context.new_page()
                page.goto(f"{url}/t/{token}?lang={lang}")
                page.wait_for_load_state("load")
                # The page as first shown (the map's box offers it), then with the map: the first
                # time on this device on request; after that it comes by itself.
                if page.locator("#map-show:enabled").count():
                    found += _axe(page, f"tracking {lang} {size} before its map")
                    page.click("#map-show")
                page.wait_for_selector("[data-marker='courier']", timeout=20000)
                found += _axe(page, f"tracking {lang} {size}")
                page.goto(f"{url}/console/?lang={lang}")
                page.wait_for_selector("body[data-view='signin']")
                found += _axe(page, f"console sign-in {lang} {size}")
                page.goto(f"{url}/app/?lang={lang}")
                page.wait_for_selector("body[data-view='signin']")
                found += _axe(page, f"courier sign-in {lang} {size}")
                page.goto(f"{url}/login?lang={lang}&token=" + "t" * 40)
                page.wait_for_selector("#again:not([hidden])")
                found += _axe(page, f"link sign-in {lang} {size}")
                page.close()
    assert found == []


def test_the_day_board_and_the_courier_run_have_no_serious_violation(pages_demo, axe_ready) -> None:
    url = pages_demo["url"]
    found: list[str] = []
    with chromium() as browser:
        for size, context in (
            ("phone", courier_phone(browser, ROAD_A, bypass_csp=True)),
            ("desktop", browser.new_context(viewport=DESKTOP, bypass_csp=True)),
        ):
            board = context.new_page()
            board.goto(f"{url}/console/?lang=en")
            board.wait_for_selector("body[data-view='signin']")
            board.fill("#signin-email", "anahit@arev.am")
            board.fill("#signin-password", PASSWORD)
            board.click("#signin-submit")
            board.wait_for_selector("body[data-stream='live']")
            board.wait_for_selector("#orders tbody tr")
            run = context.new_page()
            run.goto(f"{url}/app/?lang=en")
            run.wait_for_selector("body[data-view='signin']")
            sign_in_app(run, "narek@arev.am")
            run.wait_for_selector("[data-map]")
            # Headings in order (Lighthouse's heading-order): the run's h2 before its stops' h3.
            first = run.evaluate("document.querySelector('#tab-run h2, #tab-run h3').tagName")
            assert first == "H2"
            for lang in LANGUAGES:
                _choose(board, lang)
                found += _axe(board, f"day board {lang} {size}")
                assert board.get_attribute("#views", "aria-label") == VIEWS[lang]
                _choose(run, lang)
                found += _axe(run, f"courier run {lang} {size}")
                assert run.get_attribute("nav.tabs", "aria-label") == MENU[lang]
            if size == "phone":
                # Nothing wider than the screen (the orders table scrolls in its own box).
                assert board.evaluate("document.documentElement.scrollWidth") <= 390
    assert found == []
