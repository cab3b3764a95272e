"""The console's other views in a real browser against the real server: an order's detail (audit
trail, proof photo, edit), cash handovers confirmed with a shortfall, the team (invite, disable, login
link), company settings, depots and plan, and an invite accepted by an existing account that signs
in first."""

from __future__ import annotations

import io

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.messages.texts import sms_shape
from appliance.dispatch.models import Company, Depot, Membership, Order, RecipientSettings, User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
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
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C

pytestmark = BROWSER_TEST


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), (30, 140, 90)).save(buffer, "PNG")
    return buffer.getvalue()


def tmp_logo():
    """A PNG logo on disk for the file input."""
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "logo.png"
    path.write_bytes(_png())
    return path


def _delivered_cash_order(url: str, dispatcher, courier) -> dict:
    """A cash order the courier delivered with a photo, through the API as the app would."""
    pin = {"lat": ROAD_B[0], "lon": ROAD_B[1]}
    body = ORDER | {"isCod": True, "amountAmd": 9000, "pin": pin}
    order = requests.post(f"{url}/orders", json=body, headers=dispatcher.headers).json()["order"]
    path = f"{url}/orders/{order['id']}"
    requests.post(f"{path}/status", json={"status": "ready"}, headers=dispatcher.headers)
    requests.post(f"{path}/assign", json={"courierId": int(courier.courier.id)}, headers=dispatcher.headers)
    mine = f"{url}/courier/orders/{order['id']}"
    requests.post(f"{mine}/status", json={"status": "picked_up"}, headers=courier.headers)
    upload = requests.post(
        f"{mine}/proof/upload-url", json={"contentType": "image/png"}, headers=courier.headers
    )
    put = requests.put(upload.json()["url"], data=_png(), headers={"Content-Type": "image/png"})
    assert put.status_code == 200, put.text
    done = {"status": "delivered", "recipientName": "Ani", "photoKey": upload.json()["key"]}
    answer = requests.post(f"{mine}/status", json=done, headers=courier.headers)
    assert answer.status_code == 200, answer.text
    return order


@pytest.fixture
def office(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    arev = make_company("Arev Express", depot=ROAD_A)
    owner = make_member(
        app, arev, "owner", email="ani@arev.am", name="Ani", password_hash=hash_password(PASSWORD)
    )
    courier = make_member(app, arev, "courier", name="Narek")
    make_member(app, arev, "dispatcher", name="Lilit")
    draft_body = ORDER | {"recipientName": "Draft Person"}
    garun = make_company("Garun Delivery", depot=ROAD_C)
    garun_owner = make_member(app, garun, "owner", name="Hayk")
    # The SMPP provider typed below is local (smppHost must resolve to public addresses otherwise).
    with serving(mapped_data_dir, port, {"APPLIANCE_SMPP_ALLOW_PRIVATE": "1"}) as url:
        delivered = _delivered_cash_order(url, owner, courier)
        assert requests.post(f"{url}/courier/cash/settle", headers=courier.headers).status_code in (200, 201)
        draft = requests.post(f"{url}/orders", json=draft_body, headers=owner.headers).json()["order"]
        invite = requests.post(
            f"{url}/company/invites",
            json={"role": "dispatcher", "name": "Ani", "email": "ani@arev.am"},
            headers=garun_owner.headers,
        ).json()
        yield url, courier, delivered, draft, invite["link"], garun


def test_the_office_views_of_the_console(office) -> None:
    url, courier, delivered, draft, invite_link, garun = office
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
        page = context.new_page()
        sign_in_console(page, url, "ani@arev.am")
        page.click("[data-lang='en']")

        # An order's detail: the audit trail and the proof photo.
        page.click(f"[data-detail='{delivered['id']}']")
        page.wait_for_selector("#detail-dialog[open]")
        page.wait_for_selector("#detail-photo:not([hidden])")
        wait_until(page, "document.querySelector('#detail-photo').naturalWidth === 320")
        kinds = page.eval_on_selector_all("#detail-audit li", "els => els.map(e => e.dataset.kind)")
        assert kinds[0] == "created" and "assigned" in kinds and kinds.count("status_changed") >= 3
        assert page.is_hidden("#detail-edit")
        screenshot(page, "console-order-detail")
        page.click("#detail-dialog button[type='submit']")
        # A draft is edited in the same form, pin included.
        page.click(f"[data-detail='{draft['id']}']")
        page.click("#detail-edit")
        page.wait_for_selector("#order-dialog[open]")
        assert page.input_value("#o-name") == "Draft Person"
        page.fill("#o-name", "Edited Person")
        page.fill("#o-lat", str(ROAD_C[0]))
        page.fill("#o-lon", str(ROAD_C[1]))
        page.click("#order-save")
        page.wait_for_selector("#order-dialog", state="hidden")
        edited = Order.get_by_id(draft["id"])
        assert edited.recipient_name == "Edited Person" and round(edited.lat, 5) == round(ROAD_C[0], 5)

        # Cash: the courier's handover, confirmed short with a note.
        page.click("[data-view-tab='cash']")
        page.wait_for_selector("#settlements tbody tr[data-settlement]")
        page.fill("[data-received]", "8000")
        page.fill("[data-note]", "1000 missing, to be repaid")
        screenshot(page, "console-cash")
        page.click("[data-confirm]")
        page.wait_for_selector("#confirmed li[data-confirmed]")
        assert "1,000" in page.inner_text("#confirmed")
        assert page.is_visible("#no-settlements")

        # Team: invite a courier (a shareable link), disable and enable the courier, a login link.
        page.click("[data-view-tab='team']")
        page.wait_for_selector(f"#members tr[data-member='{courier.user.id}']")
        page.fill("#i-name", "Sona")
        page.select_option("#i-role", "courier")
        page.click("#invite-form button[type='submit']")
        page.wait_for_selector("#invite-link-box:not([hidden])")
        assert "/invite/" in page.input_value("#invite-link")
        page.wait_for_selector("#invites li[data-invite]")
        # The owner sees every invite made (issue 41): who invited whom, as what, when.
        page.wait_for_selector("#invites-made li[data-invite-made][data-state='usable']")
        assert "Ani → Sona" in page.inner_text("#invites-made")
        page.click(f"[data-toggle='{courier.user.id}']")
        page.wait_for_selector(f"#members tr[data-member='{courier.user.id}'][data-status='disabled']")
        page.click(f"[data-toggle='{courier.user.id}']")
        page.wait_for_selector(f"#members tr[data-member='{courier.user.id}'][data-status='active']")
        page.click(f"[data-login-link='{courier.user.id}']")
        page.wait_for_selector("#login-link-box:not([hidden])")
        assert "/invite/" in page.input_value("#login-link")
        # A dispatcher made an owner from the same table.
        lilit = User.get(User.display_name == "Lilit")
        page.select_option(f"select[data-role='{lilit.id}']", "owner")
        eventually(lambda: Membership.get(Membership.user == lilit.id).role == "owner")
        screenshot(page, "console-team")

        # Company: settings, a depot, the plan.
        page.click("[data-view-tab='company']")
        wait_until(page, "document.querySelector('#c-name').value === 'Arev Express'")
        page.fill("#c-support", "+37410101010")
        page.click("#company-form button[type='submit']")
        eventually(lambda: Company.get(Company.name == "Arev Express").support_phone == "+37410101010")
        # Messages to recipients: the SMPP provider, the events that send, an Armenian text
        # with its SMS cost shown as it is typed (UCS-2).
        page.wait_for_selector("#m-events input[data-event='assigned']")
        page.check("#m-sms")
        page.fill("#m-host", "localhost")
        page.fill("#m-port", "2775")
        page.fill("#m-system", "arev")
        page.fill("#m-password", "s3cret")
        page.fill("#m-source", "AREV")
        page.check("#m-events input[data-event='assigned']")
        page.check("#m-events input[data-event='delivered']")
        page.click("#m-templates details:first-child summary")
        typed = "{company}: պատվերը ճանապարհին է {link}"
        page.fill("#m-t-assigned-hy", typed)
        cost = page.locator("#m-t-assigned-hy + span").inner_text()
        # The count the sender will make (smpplib's split) on the text as it will be sent (issue
        # 46): the company's name in it, the link as long as a real one with its ?lang=.
        link = page.evaluate("location.origin") + "/t/" + "x" * 32 + "?lang=hy"
        company_name = page.inner_text("#company-name")
        shape = sms_shape(typed.replace("{company}", company_name).replace("{link}", link))
        assert cost == f"{shape['segments']} SMS · UCS2", cost
        page.click("#messages-form button[type='submit']")
        eventually(lambda: RecipientSettings.select().where(RecipientSettings.sms_enabled).count() == 1)
        saved = RecipientSettings.get()
        assert saved.smpp_host == "localhost" and b"s3cret" not in bytes(saved.smpp_password_cipher)
        assert '"assigned"' in saved.events and "պատվերը" in saved.templates
        wait_until(page, "document.querySelector('#m-password').placeholder.length > 0")
        page.fill("#dp-name", "North")
        page.fill("#dp-address", "Komitas 20")
        page.fill("#dp-lat", str(ROAD_C[0]))
        page.fill("#dp-lon", str(ROAD_C[1]))
        page.click("#depot-form button[type='submit']")
        wait_until(page, "document.querySelectorAll('#depots li').length === 2")
        assert Depot.select().where(Depot.name == "North").count() == 1
        # The logo goes through the presigned PUT and shows once its key is set.
        logo = tmp_logo()
        page.set_input_files("#c-logo-file", str(logo))
        page.wait_for_selector("#c-logo:not([hidden])")
        wait_until(page, "document.querySelector('#c-logo').naturalWidth === 320")
        assert Company.get(Company.name == "Arev Express").logo_key
        page.click("[data-plan='city']")
        wait_until(page, "document.querySelector(\"[data-plan='city']\").disabled")
        screenshot(page, "console-company")

        # An invite for this existing account: sign in first, then say yes to the company shown.
        page.click("#sign-out")
        page.wait_for_selector("body[data-view='signin']")
        page.goto(invite_link)
        page.click("#button")
        page.click("#sign-in-to-accept")
        page.wait_for_selector("body[data-view='signin']")
        assert "#invite" not in page.url
        page.fill("#signin-email", "ani@arev.am")
        page.fill("#signin-password", PASSWORD)
        page.click("#signin-submit")
        page.wait_for_selector("#invite-dialog[open]")
        assert "Garun Delivery" in page.inner_text("#invite-ask")
        page.click("#invite-join")
        wait_until(page, "document.querySelector('#company-name').textContent === 'Garun Delivery'")
        assert Membership.select().where(Membership.company == garun.id).count() == 2
        assert page.locator("#company-switch option").count() == 2
