"""An invite link opened in a signed-in console tab joins nothing by itself (issue 33): the console
shows which company the invite is for and asks; "Not now" leaves the account as it was, "Join"
accepts and goes on in the new company."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import Membership, User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    serving,
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST


@pytest.fixture
def invited(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    arev = make_company("Arev Express", depot=ROAD_A)
    ani = make_member(
        app, arev, "owner", email="ani@arev.am", name="Ani", password_hash=hash_password(PASSWORD)
    )
    User.update(language="en").where(User.id == ani.user.id).execute()
    garun = make_company("Garun Delivery", depot=ROAD_A)
    garun_owner = make_member(app, garun, "owner", name="Hayk")
    with serving(mapped_data_dir, port) as url:

        def invite() -> str:
            made = requests.post(
                f"{url}/company/invites",
                json={"role": "dispatcher", "name": "Ani"},
                headers=garun_owner.headers,
            )
            assert made.status_code == 201, made.text
            return made.json()["link"].rsplit("/invite/", 1)[1]

        yield url, invite, garun


def test_a_signed_in_tab_asks_before_joining_the_company_of_an_invite_link(invited) -> None:
    url, invite, garun = invited
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        sign_in_console(page, url, "ani@arev.am")

        # Not now: nothing joined, the tab stays in its company.
        page.goto(f"{url}/console/#invite={invite()}")
        page.wait_for_selector("#invite-dialog[open]")
        assert page.inner_text("#invite-ask") == "Hayk invites you to Garun Delivery as dispatcher."
        assert "#invite" not in page.url
        page.click("#invite-decline")
        page.wait_for_selector("#invite-dialog:not([open])", state="attached")
        page.wait_for_selector("body[data-view='workspace']")
        assert page.inner_text("#company-name") == "Arev Express"
        assert Membership.select().where(Membership.company == garun.id).count() == 1

        # Join: accepted, and the console goes on in the new company.
        page.goto(f"{url}/console/?lang=en#invite={invite()}")
        page.wait_for_selector("#invite-dialog[open]")
        page.click("#invite-join")
        wait_until(page, "document.querySelector('#company-name').textContent === 'Garun Delivery'")
        assert Membership.select().where(Membership.company == garun.id).count() == 2
