"""Issue 49, against the real server: the tracking page's first HTML answer carries its stage and
arrival estimate (no script needed) and is never indexed; static files go out brotli or gzip with
the right headers; MapLibre never loads on a sign-in screen, and in the courier app only once its
map opens; in Debian's Chromium, the tracking page's stage and ETA are live regions, its map comes
only when asked for and keeps its space while MapLibre is on its way, its labels follow the
language, the focus ring meets 3:1 on three brand colours, focus goes to the first heading after
sign-in."""

from __future__ import annotations

import gzip
import re

import brotli
import pytest
import requests

from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    courier_phone,
    sign_in_app,
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST

PHONE = {"width": 390, "height": 844}
MAP_BOX = (
    "(() => { const r = document.getElementById('map').getBoundingClientRect();"
    " return [r.top, r.height]; })()"
)


def _text_of(html: str, element_id: str) -> str:
    match = re.search(rf'<[a-z0-9]+ id="{element_id}"[^>]*>([^<]*)<', html)
    assert match, element_id
    return match.group(1)


def test_the_tracking_pages_first_html_carries_stage_and_eta_in_the_recipients_language(pages_demo) -> None:
    page = f"{pages_demo['url']}/t/{pages_demo['token']}"
    english = requests.get(page + "?lang=en", timeout=10)
    assert english.status_code == 200
    assert _text_of(english.text, "headline") == "On the way"
    assert re.fullmatch(r"Arriving in about \d+ min", _text_of(english.text, "eta"))
    assert '<html lang="en">' in english.text
    assert _text_of(english.text, "courier-line") == "Courier: Narek"  # nothing above the map comes later
    russian = requests.get(page, headers={"Accept-Language": "ru-RU,ru;q=0.9,en;q=0.5"}, timeout=10)
    assert _text_of(russian.text, "headline") == "В пути"
    assert re.fullmatch(r"Прибудет примерно через \d+ мин", _text_of(russian.text, "eta"))
    armenian = requests.get(page, timeout=10)  # no language asked for: Armenian
    assert _text_of(armenian.text, "headline") == "Ճանապարհին է" and "րոպեից" in _text_of(
        armenian.text, "eta"
    )
    chosen = requests.get(page, cookies={"track-lang": "en"}, headers={"Accept-Language": "ru"}, timeout=10)
    assert _text_of(chosen.text, "headline") == "On the way"  # the recipient's earlier choice wins
    gone = requests.get(f"{pages_demo['url']}/t/{'x' * 43}?lang=en", timeout=10)
    assert _text_of(gone.text, "headline") == "This tracking link is no longer valid."


def test_tracking_pages_are_never_indexed(pages_demo) -> None:
    response = requests.get(f"{pages_demo['url']}/t/{pages_demo['token']}", timeout=10)
    assert response.headers["X-Robots-Tag"] == "noindex, nofollow"
    assert '<meta name="robots" content="noindex, nofollow">' in response.text
    assert "no-store" in response.headers["Cache-Control"]


def _raw(url: str, accept: str) -> requests.Response:
    response = requests.get(url, headers={"Accept-Encoding": accept}, stream=True, timeout=10)
    response.raw_bytes = response.raw.read(decode_content=False)  # type: ignore[attr-defined]
    return response


def test_static_files_and_pages_go_out_compressed_with_vary_and_decompress_to_the_same_bytes(
    pages_demo,
) -> None:
    url = pages_demo["url"]
    html = requests.get(f"{url}/t/{pages_demo['token']}", timeout=10).text
    script = re.search(r'src="(/static/js/track-page\.js\?v=[0-9a-f]+)"', html).group(1)
    for path in (script, "/static/vendor/maplibre-gl/maplibre-gl.css", "/console/console.css"):
        plain = _raw(url + path, "identity")
        assert "Content-Encoding" not in plain.headers and plain.headers["Vary"] == "Accept-Encoding"
        for accept, encoding, decompress in (
            ("gzip, deflate, br", "br", brotli.decompress),
            ("gzip, deflate", "gzip", gzip.decompress),
        ):
            sent = _raw(url + path, accept)
            assert sent.headers["Content-Encoding"] == encoding, path
            assert sent.headers["Vary"] == "Accept-Encoding"
            assert int(sent.headers["Content-Length"]) == len(sent.raw_bytes) < len(plain.raw_bytes)
            assert decompress(sent.raw_bytes) == plain.raw_bytes, path
    hashed = _raw(url + script, "br")
    assert hashed.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    page = _raw(f"{url}/t/{pages_demo['token']}", "br")
    assert page.headers["Content-Encoding"] == "br" and b"aria-live" in brotli.decompress(page.raw_bytes)
    assert requests.get(url + "/favicon.ico", timeout=10).status_code == 200


def _maplibre_requests(page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if "maplibre-gl" in request.url else None)
    return seen


def test_no_sign_in_screen_loads_maplibre_and_the_courier_app_only_when_its_map_opens(pages_demo) -> None:
    url = pages_demo["url"]
    with chromium() as browser:
        console = browser.new_page()
        console_maps = _maplibre_requests(console)
        console.goto(url + "/console/?lang=en")
        console.wait_for_selector("body[data-view='signin']")
        console.wait_for_load_state("load")  # every module of the page has run
        login = browser.new_page()
        login_maps = _maplibre_requests(login)
        login.goto(url + "/login?token=" + "t" * 40)
        login.wait_for_load_state("load")
        assert console_maps == [] and login_maps == []
        assert console.evaluate("typeof maplibregl") == "undefined"
        # Signed in, the console's board shows its live map: MapLibre comes then.
        console.fill("#signin-email", "anahit@arev.am")
        console.fill("#signin-password", PASSWORD)
        console.click("#signin-submit")
        console.wait_for_selector("body[data-stream='live']")
        console.wait_for_selector("#live-map canvas", timeout=20000)  # made once the board is in
        assert any(u.split("?")[0].endswith("maplibre-gl.js") for u in console_maps)
        # Focus goes to the page's first heading.
        assert console.evaluate("[document.activeElement.id, document.activeElement.tagName]") == [
            "company-name",
            "H1",
        ]

        context = courier_phone(browser, ROAD_A)
        app = context.new_page()
        app_maps = _maplibre_requests(app)
        app.goto(url + "/app/?lang=en")
        app.wait_for_selector("body[data-view='signin']")
        sign_in_app(app, "narek@arev.am")
        app.wait_for_selector("[data-map]")
        assert app.evaluate("[document.activeElement.id, document.activeElement.tagName]") == [
            "company-name",
            "H1",
        ]
        # (The service worker keeps MapLibre for offline use, in the background: not the page's asking.)
        assert app_maps == [] and app.evaluate("typeof maplibregl") == "undefined"
        app.click("[data-map]")
        app.wait_for_selector("#stop-map [data-marker='destination']", timeout=20000)
        assert app.evaluate("typeof maplibregl") == "object"


def _map_switch(page) -> list:
    return [
        page.get_attribute("#map-toggle", "aria-expanded"),
        page.inner_text("#map-toggle"),
        page.is_visible("#live-map"),
    ]


def test_the_day_boards_map_is_asked_for_on_a_phone_shown_beside_it_on_a_desktop_and_the_choice_kept(
    pages_demo,
) -> None:
    url = pages_demo["url"]
    with chromium() as browser:
        phone = browser.new_context(viewport=PHONE).new_page()
        maps = _maplibre_requests(phone)
        sign_in_console(phone, url, "anahit@arev.am")
        phone.wait_for_selector("#orders tbody tr")
        phone.click("[data-lang='en']")  # kept for the dispatcher: the desktop below is English too
        # On a phone the rows come alone; the map is one tap away, and nothing of MapLibre is fetched.
        assert _map_switch(phone) == ["false", "Show the map", False]
        assert maps == [] and phone.evaluate("typeof maplibregl") == "undefined"
        phone.click("#map-toggle")
        phone.wait_for_selector("#live-map [data-marker='depot']", timeout=20000)
        assert _map_switch(phone) == ["true", "Hide the map", True]
        # Kept on the device: after a reload the map comes by itself.
        phone.reload()
        phone.wait_for_selector("body[data-stream='live']")
        phone.wait_for_selector("#live-map [data-marker='depot']", timeout=20000)
        assert _map_switch(phone) == ["true", "Hide the map", True]

        desktop = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        sign_in_console(desktop, url, "anahit@arev.am")
        desktop.wait_for_selector("#live-map [data-marker='depot']", timeout=20000)  # beside the board
        assert _map_switch(desktop) == ["true", "Hide the map", True]
        desktop.click("#map-toggle")
        assert _map_switch(desktop) == ["false", "Show the map", False]
        hidden = _maplibre_requests(desktop)
        desktop.reload()
        desktop.wait_for_selector("body[data-stream='live']")
        desktop.wait_for_selector("#orders tbody tr")
        assert _map_switch(desktop) == ["false", "Show the map", False]
        assert hidden == [] and desktop.evaluate("typeof maplibregl") == "undefined"
        desktop.click("[data-lang='hy']")
        assert desktop.inner_text("#map-toggle") == "Ցույց տալ քարտեզը"


def test_the_tracking_page_paints_before_maplibre_and_keeps_the_maps_space(pages_demo) -> None:
    held: list = []
    with chromium() as browser:
        page = browser.new_page(viewport=PHONE)
        page.route("**/maplibre-gl.js*", lambda route: held.append(route))
        page.goto(f"{pages_demo['url']}/t/{pages_demo['token']}?lang=en", wait_until="domcontentloaded")
        page.wait_for_selector("body[data-stage='picked_up']")
        page.wait_for_load_state("load")  # every module of the page has run
        # No MapLibre until the recipient asks: the stage and the estimate are shown, the map's box
        # is laid out with the button that opens it.
        assert page.inner_text("#headline") == "On the way" and "min" in page.inner_text("#eta")
        box = page.evaluate(MAP_BOX)
        assert box[1] == 300
        assert page.evaluate("document.querySelectorAll('script[src*=\"maplibre-gl.js\"]').length") == 0
        assert held == [] and page.is_visible("#map-show")
        page.click("#map-show")
        wait_until(page, "document.querySelectorAll('script[src*=\"maplibre-gl.js\"]').length > 0")
        assert page.inner_text("#map-show") == "Loading the map…"
        assert page.evaluate("typeof maplibregl") == "undefined"
        for route in held:
            route.continue_()
        page.wait_for_selector("[data-marker='courier']", timeout=20000)
        after = page.evaluate(MAP_BOX)
        assert after == box  # nothing moved when the map arrived
        # Live regions: a screen reader hears a new stage or estimate, politely.
        for element in ("#headline", "#eta"):
            assert page.get_attribute(element, "aria-live") == "polite"
        # The markers and MapLibre's own controls speak the page's language.
        assert page.get_attribute("[data-marker='courier']", "aria-label") == "The courier"
        assert page.get_attribute(".maplibregl-ctrl-zoom-in", "aria-label") == "Zoom in"
        page.click("[data-lang='hy']")
        assert page.get_attribute("[data-marker='destination']", "aria-label") == "Առաքման հասցեն"
        assert page.get_attribute("#comment", "aria-label") == "Մեկնաբանություն (ոչ պարտադիր)"
        armenian = browser.new_page(viewport=PHONE)
        armenian.goto(f"{pages_demo['url']}/t/{pages_demo['token']}?lang=hy")
        assert armenian.inner_text("#map-show") == "Ցույց տալ առաքիչին քարտեզի վրա"
        armenian.click("#map-show")
        armenian.wait_for_selector(".maplibregl-ctrl-zoom-in", timeout=20000)
        assert armenian.get_attribute(".maplibregl-ctrl-zoom-in", "aria-label") == "Մեծացնել"
        assert (
            armenian.evaluate("[...document.querySelectorAll('[data-lang]')].map((b) => b.lang).join()")
            == "hy,ru,en"
        )


def _channel(value: float) -> float:
    value /= 255
    return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4


def _luminance(rgb: tuple[int, int, int]) -> float:
    r, g, b = (_channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _rgb(css: str) -> tuple[int, int, int]:
    numbers = re.findall(r"[\d.]+", css)
    assert len(numbers) >= 3, css
    return int(float(numbers[0])), int(float(numbers[1])), int(float(numbers[2]))


@pytest.mark.parametrize("brand", ["#1F6FEB", "#FFD400", "#101828"])
def test_the_focus_ring_meets_3_to_1_on_the_brand_colour(pages_demo, brand) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport=PHONE)
        page.goto(f"{pages_demo['url']}/t/{pages_demo['token']}?lang=en")
        page.evaluate(f"document.documentElement.style.setProperty('--brand', '{brand}')")
        page.keyboard.press("Tab")  # by keyboard: :focus-visible
        wait_until(page, "document.activeElement && document.activeElement.dataset.lang")
        ring = page.evaluate(
            """(() => { const s = getComputedStyle(document.activeElement);
                        const bg = getComputedStyle(document.querySelector('header')).backgroundColor;
                        return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow, bg]; })()"""
        )
        style, width, outline, shadow, background = ring
        assert style == "solid" and float(width.rstrip("px")) >= 2
        assert _rgb(background) == tuple(int(brand[i : i + 2], 16) for i in (1, 3, 5))
        inner, outer = _rgb(outline), _rgb(shadow)
        # The ring's two tones meet 3:1 with each other, and one of them with the brand behind it.
        assert contrast(inner, outer) >= 3
        assert max(contrast(inner, _rgb(background)), contrast(outer, _rgb(background))) >= 3, ring
