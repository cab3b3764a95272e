"""The pages behind emailed links in a real browser against the real server, in the three
languages: an invitation opened in Armenian (the browser's language), switched to Russian and
accepted with a new password, going on to the console; a spent sign-in link answered in Russian,
a new link asked for and followed, going on to the console in the user's own language."""

from __future__ import annotations

import re

import pytest
import requests

from appliance.dispatch.app import create_app
from appliance.dispatch.models import User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, wait_for_mail
from tests.e2e.console_server import BROWSER_TEST, chromium, screenshot, serving, wait_until
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST


@pytest.fixture
def links(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    owner = make_member(app, company, "owner", email="ani@arev.am", name="Ani")
    User.update(language="en").where(User.id == owner.user.id).execute()
    with serving(mapped_data_dir, port) as url:
        made = requests.post(
            f"{url}/company/invites",
            json={"role": "dispatcher", "name": "Lilit", "email": "lilit@arev.am"},
            headers=owner.headers,
        )
        assert made.status_code == 201, made.text
        # The invitation's mail is written by the server's mail worker: in the outbox before a
        # test counts the mails it makes itself.
        wait_for_mail(mapped_data_dir / "outbox")
        link = made.json()["link"]
        yield url, link[link.index("/invite/") :]


def _policy_problems(page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
    return problems


def test_an_invitation_reads_in_armenian_then_russian_and_goes_on_to_the_console(links) -> None:
    url, path = links
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 390, "height": 844}, locale="hy-AM").new_page()
        problems = _policy_problems(page)
        page.goto(url + path)
        page.wait_for_selector("body[data-stage='open']")
        assert page.evaluate("document.documentElement.lang") == "hy"
        assert page.inner_text("#title") == "Arev Express-ը ձեզ հրավիրում է"
        assert "դիսպետչեր" in page.inner_text("#message") and "Ani" in page.inner_text("#message")
        assert page.inner_text("#button") == "Ընդունել"
        assert page.is_hidden("#sign-in-to-accept")  # only when the email already has an account
        screenshot(page, "invite-page-hy")
        page.click("[data-lang='ru']")
        assert page.inner_text("#title") == "Arev Express приглашает вас"
        assert "диспетчер" in page.inner_text("#message")
        assert page.get_attribute("[data-lang='ru']", "aria-pressed") == "true"
        screenshot(page, "invite-page-ru")
        page.fill("#password", "a new password")
        page.click("#button")
        page.wait_for_url(url + "/console/", timeout=20000)
        page.wait_for_selector("body[data-view='workspace']")
        assert page.inner_text("#company-name") == "Arev Express"
        assert not problems, problems


def test_a_spent_sign_in_link_answers_in_russian_and_a_new_one_signs_in(links, mapped_data_dir) -> None:
    url, _ = links
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 390, "height": 844}, locale="ru-RU").new_page()
        problems = _policy_problems(page)
        page.goto(url + "/login?token=" + "x" * 43)
        page.wait_for_selector("body[data-stage='ask']")
        assert "token" not in page.url
        assert page.inner_text("#message") == "Ссылка недействительна, уже использована или устарела."
        assert page.inner_text("#again button") == "Прислать новую ссылку для входа"
        screenshot(page, "sign-in-link-ru")
        page.fill("#email", "ani@arev.am")
        outbox = mapped_data_dir / "outbox"
        before = set(outbox.glob("*.eml"))
        page.click("#again button")
        wait_until(page, "document.querySelector('#status').textContent.includes('ссылка отправлена')")
        wait_for_mail(outbox, len(before))  # the server's mail worker sends it
        (mail,) = set(outbox.glob("*.eml")) - before
        link = re.search(r"https?://\S+/login\?token=[\w-]+", mail_text(mail))
        assert link, mail_text(mail)
        page.goto(url + link.group(0)[link.group(0).index("/login") :])
        page.wait_for_url(url + "/console/", timeout=20000)
        page.wait_for_selector("body[data-view='workspace']")
        assert page.inner_text("#new-order") == "New order"  # Ani's own language, not the browser's
        assert not problems, problems
