"""The page behind an emailed password link (forgot password) in a real browser: it asks for the
new password, sets it, signs in and goes on to the console; the old password no longer works."""

from __future__ import annotations

import re

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, wait_for_mail
from tests.e2e.console_server import BROWSER_TEST, PASSWORD, chromium, serving, wait_until
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST


@pytest.fixture
def office(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    owner = make_member(
        app,
        make_company("Arev Express", depot=ROAD_A),
        "owner",
        email="ani@arev.am",
        password_hash=hash_password(PASSWORD),
    )
    User.update(language="en").where(User.id == owner.user.id).execute()
    with serving(mapped_data_dir, port) as url:
        yield url


def test_a_forgotten_password_is_set_anew_through_the_emailed_link(office, mapped_data_dir) -> None:
    url = office
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US").new_page()
        page.goto(url + "/login")
        page.wait_for_selector("body[data-stage='ask']")
        page.fill("#email", "ani@arev.am")
        before = len(list((mapped_data_dir / "outbox").glob("*.eml")))
        page.click("#send-password-link")
        wait_until(page, "document.querySelector('#status').textContent.includes('on its way')")
        mail = mail_text(wait_for_mail(mapped_data_dir / "outbox", before)[-1])  # sent by the server's worker
        link = re.search(r"https?://\S+/login\?password=[\w-]+", mail)
        assert link, mail
        page.goto(url + link.group(0)[link.group(0).index("/login") :])
        page.wait_for_selector("body[data-stage='password']")
        assert "password=" not in page.url
        assert page.inner_text("#title") == "New password"
        page.fill("#new-password", "a brand new password")
        page.click("#new-password-form button")
        page.wait_for_url(url + "/console/", timeout=20000)
        page.wait_for_selector("body[data-view='workspace']")
    old = requests.post(f"{url}/auth/login", json={"email": "ani@arev.am", "password": PASSWORD})
    new = requests.post(
        f"{url}/auth/login", json={"email": "ani@arev.am", "password": "a brand new password"}
    )
    assert (old.status_code, new.status_code) == (401, 200)
