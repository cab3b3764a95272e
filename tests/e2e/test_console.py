"""The dispatcher console in a real browser (Debian's Chromium driven by Playwright) against the real
server: sign-in with a password, the language switch, the company switcher and sign-out."""

from __future__ import annotations

import re

import pytest

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, wait_for_mail
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    screenshot,
    serving,
    wait_until,
)
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST


@pytest.fixture
def console(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    arev = make_company("Arev Express", depot=ROAD_A)
    owner = make_member(
        app, arev, "owner", email="ani@arev.am", name="Ani Sargsyan", password_hash=hash_password(PASSWORD)
    )
    second = make_company("Garun Delivery", depot=ROAD_A)
    make_member(app, second, "dispatcher", user=owner.user)
    with serving(mapped_data_dir, port) as url:
        yield url


def test_a_dispatcher_signs_in_switches_language_and_company_and_signs_out(console) -> None:
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
        page = context.new_page()
        problems: list[str] = []
        page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
        page.goto(console + "/")
        assert page.url == console + "/console/"
        page.wait_for_selector("body[data-view='signin']")
        # Armenian first: before anyone signs in, the browser's language (English here) decides.
        assert page.inner_text("#signin-submit") == "Sign in"
        page.click("[data-lang='hy']")
        assert page.inner_text("#signin-submit") == "Մուտք գործել"
        assert page.evaluate("document.documentElement.lang") == "hy"
        page.fill("#signin-email", "ani@arev.am")
        page.fill("#signin-password", "wrong password")
        page.click("#signin-submit")
        wait_until(page, "document.querySelector('#signin-message').textContent.length > 0")
        assert "գաղտնաբառ" in page.inner_text("#signin-message")
        screenshot(page, "console-sign-in")

        page.fill("#signin-password", PASSWORD)
        page.click("#signin-submit")
        page.wait_for_selector("body[data-view='workspace']")
        page.wait_for_selector("body[data-stream='live']")
        assert page.inner_text("#company-name") == "Arev Express"
        assert page.inner_text("#user-name") == "Ani Sargsyan"
        # The user's language is theirs (PATCH /me): English now, and still English after a reload.
        with page.expect_response(lambda r: r.url.endswith("/me") and r.request.method == "PATCH") as saved:
            page.click("[data-lang='en']")
        assert saved.value.ok, saved.value.text()  # stored before the reload (no fixed wait)
        wait_until(page, "document.querySelector('#new-order').textContent === 'New order'")
        page.reload()
        page.wait_for_selector("body[data-view='workspace']")  # the tab kept the refresh token
        assert page.inner_text("#new-order") == "New order"
        screenshot(page, "console-day-board-empty")
        page.click("[data-lang='ru']")
        assert page.inner_text("#new-order") == "Новый заказ"
        assert page.evaluate("document.documentElement.lang") == "ru"
        page.set_viewport_size({"width": 820, "height": 1180})  # a tablet: one column
        screenshot(page, "console-tablet-ru")
        page.set_viewport_size({"width": 1400, "height": 900})
        page.click("[data-lang='en']")

        # The company switcher opens a session in the other company.
        page.select_option("#company-switch", label="Garun Delivery · dispatcher")
        wait_until(page, "document.querySelector('#company-name').textContent === 'Garun Delivery'")
        page.wait_for_selector("body[data-stream='live']")
        # The access token is in memory only; the tab keeps just the (rotated) refresh token.
        kept = page.evaluate("sessionStorage.getItem('appliance.session')")
        assert "accessToken" not in kept and "refreshToken" in kept
        assert page.evaluate("localStorage.length") == 1  # the language, nothing else

        page.click("#sign-out")
        page.wait_for_selector("body[data-view='signin']")
        assert page.evaluate("sessionStorage.getItem('appliance.session')") is None
        page.reload()
        page.wait_for_selector("body[data-view='signin']")
        assert not [p for p in problems if "Content Security Policy" in p], problems


def test_an_emailed_sign_in_link_opens_the_console_and_a_courier_s_opens_the_app(
    console, mapped_data_dir
) -> None:
    with chromium() as browser:
        page = browser.new_context(locale="en-US").new_page()
        page.goto(console + "/console/?lang=en")
        page.wait_for_selector("body[data-view='signin']")
        page.fill("#signin-email", "ani@arev.am")
        before = len(list((mapped_data_dir / "outbox").glob("*.eml")))
        page.click("#signin-magic")
        wait_until(page, "document.querySelector('#signin-message').textContent.includes('link')")
        mails = wait_for_mail(mapped_data_dir / "outbox", before)  # the server's mail worker sends it
        link = re.search(r"https?://\S+/login\?token=[\w-]+", mail_text(mails[-1]))
        assert link, mail_text(mails[-1])
        # The link's host is the public URL; open the same path on the test server.
        page.goto(console + link.group(0)[link.group(0).index("/login") :])
        page.wait_for_url(console + "/console/", timeout=20000)
        page.wait_for_selector("body[data-view='workspace']")
        assert page.inner_text("#company-name") == "Arev Express"
        assert "token" not in page.url
