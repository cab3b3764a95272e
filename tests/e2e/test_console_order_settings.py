"""The company's order settings in the console's Company view (GET and PATCH /company/order-settings,
issue 47's proof requirements among them) and each integration key's proof default in the
Integrations view, in a real browser against `appliance serve`: the owner changes them, a
dispatcher (whom the API lets read but not change them) sees them read-only, and the API's
refusals are shown as its Problem beside the form."""

from __future__ import annotations

import pytest
import requests

from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import User
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.e2e.console_server import (
    BROWSER_TEST,
    PASSWORD,
    chromium,
    screenshot,
    serving,
    sign_in_console,
    wait_until,
)
from tests.geo_fixtures import ROAD_A

pytestmark = BROWSER_TEST

KINDS = ["photo", "signature", "code", "scan", "name", "age"]


@pytest.fixture
def company(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    arev = make_company("Arev Express", depot=ROAD_A)
    hashed = hash_password(PASSWORD)
    owner = make_member(app, arev, "owner", email="ani@arev.am", name="Ani", password_hash=hashed)
    dispatcher = make_member(
        app, arev, "dispatcher", email="lilit@arev.am", name="Lilit", password_hash=hashed
    )
    User.update(language="en").execute()
    with serving(mapped_data_dir, port) as url:
        yield url, owner, dispatcher


def open_order_settings(page) -> None:
    page.click("[data-view-tab='company']")
    page.wait_for_selector("#company-view:not([hidden])")
    wait_until(page, "document.getElementById('order-settings-form').dataset.readOnly !== undefined")


def checked_kinds(page) -> list[str]:
    return [kind for kind in KINDS if page.is_checked(f"#os-proof input[data-proof='{kind}']")]


def test_the_owner_requires_a_photo_and_a_signature_and_a_dispatcher_sees_them_read_only(company) -> None:
    url, owner, dispatcher = company
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in_console(page, url, "ani@arev.am")
        open_order_settings(page)
        assert page.get_attribute("#order-settings-form", "data-read-only") == "false"
        assert checked_kinds(page) == [] and page.input_value("#os-import") == "ready"
        assert not page.is_checked("#os-integration-ready") and page.is_hidden("#os-owners-only")

        # Save with nothing changed sends nothing.
        page.click("#os-save")
        page.wait_for_selector("#order-settings-state:has-text('Nothing has changed.')")

        page.check("#os-proof-photo")
        page.check("#os-proof-signature")
        with page.expect_request(
            lambda r: r.method == "PATCH" and r.url.endswith("/company/order-settings")
        ) as sent:
            page.click("#os-save")
        assert sent.value.post_data_json == {"proofRequired": ["photo", "signature"]}  # only what changed
        page.wait_for_selector("#order-settings-state:has-text('Saved')")
        assert page.inner_text("#order-settings-error") == ""
        answer = requests.get(f"{url}/company/order-settings", headers=owner.headers).json()
        assert answer == {
            "importStatus": "ready",
            "integrationOrdersReady": False,
            "proofRequired": ["photo", "signature"],
        }

        # A value the API refuses (the select's option changed under the form) is shown as the
        # Problem's own words beside the form, and nothing is changed.
        page.evaluate(
            """() => {
                const select = document.getElementById('os-import');
                select.append(new Option('later', 'later'));
                select.value = 'later';
            }"""
        )
        page.click("#os-save")
        page.wait_for_selector("#order-settings-error:not(:empty)")
        refusal = page.inner_text("#order-settings-error")
        assert refusal.startswith("Could not do it: Invalid body: importStatus."), refusal
        assert requests.get(f"{url}/company/order-settings", headers=owner.headers).json() == answer

        # After a reload the form shows what the server keeps.
        page.reload()
        page.wait_for_selector("body[data-view='workspace']")
        open_order_settings(page)
        wait_until(page, "document.getElementById('os-proof-photo').checked")
        assert checked_kinds(page) == ["photo", "signature"] and page.input_value("#os-import") == "ready"
        screenshot(page, "console-order-settings")

        # Every word of the form exists in Armenian, Russian and English.
        missing = page.evaluate(
            """async () => {
                const {TEXTS} = await import('/console/texts.js');
                const keys = [...document.querySelectorAll('#order-settings-form [data-t]')]
                    .map((e) => e.dataset.t)
                    .concat(Object.keys(TEXTS.en).filter((k) => /^(os[A-Z]|intProof)/.test(k)));
                return keys.length < 20 ? ['too few'] : ['hy', 'ru', 'en'].flatMap(
                    (l) => keys.filter((k) => !TEXTS[l][k]).map((k) => l + ':' + k));
            }"""
        )
        assert missing == []

        # A dispatcher reads the same settings and can change none of them (PATCH is the owners').
        desk = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        desk.on("pageerror", lambda error: errors.append(str(error)))
        sign_in_console(desk, url, "lilit@arev.am")
        open_order_settings(desk)
        assert desk.get_attribute("#order-settings-form", "data-read-only") == "true"
        wait_until(desk, "document.getElementById('os-proof-photo').checked")
        assert checked_kinds(desk) == ["photo", "signature"]
        for control in ["#os-import", "#os-integration-ready", *[f"#os-proof-{kind}" for kind in KINDS]]:
            assert desk.is_disabled(control), control
        assert desk.is_hidden("#os-save") and desk.is_visible("#os-owners-only")
        assert desk.inner_text("#os-owners-only") == "Only an owner can change these settings."
        # The rest of the view loads for a dispatcher (billing, the owners' own, is not asked for).
        assert desk.input_value("#c-name") == "Arev Express" and desk.is_hidden("#billing-panel")
        # The company's settings and depots are the owners' too: read-only, no depot buttons.
        assert desk.is_disabled("#c-name") and desk.is_disabled("#c-show-phone")
        assert desk.is_hidden("#company-save") and desk.is_visible("#company-owners-only")
        assert desk.is_hidden("#depot-form") and desk.locator("#depots button").count() == 0
        assert desk.inner_text("#order-settings-error") == ""
        screenshot(desk, "console-order-settings-dispatcher")
        assert errors == []
    assert (
        requests.patch(
            f"{url}/company/order-settings", json={"proofRequired": []}, headers=dispatcher.headers
        ).status_code
        == 403
    )


def test_the_owner_sets_an_integration_key_s_proof_default_in_its_row(company) -> None:
    url, owner, _ = company
    keys = f"{url}/company/integration-keys"
    key = requests.post(keys, json={"name": "Shop Arev"}, headers=owner.headers).json()
    other = requests.post(keys, json={"name": "Shop Garun"}, headers=owner.headers).json()
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in_console(page, url, "ani@arev.am")
        page.click("[data-view-tab='integrations']")
        page.wait_for_selector(f"[data-key-proof='{key['id']}']")
        assert page.inner_text(f"[data-key-proof='{key['id']}']") == "the company's setting"

        # Cancel closes the editor and changes nothing; focus goes back to its button.
        editor = f"#key-proof-{key['id']}"
        page.click(f"[data-key-proof-edit='{key['id']}']")
        page.wait_for_selector(editor)
        page.click(f"[data-key-proof-cancel='{key['id']}']")
        page.wait_for_selector(editor, state="detached")
        assert page.evaluate("document.activeElement.dataset.keyProofEdit") == key["id"]

        # Its own set: photo only.
        page.click(f"[data-key-proof-edit='{key['id']}']")
        page.wait_for_selector(editor)
        assert page.get_attribute(f"[data-key-proof-edit='{key['id']}']", "aria-expanded") == "true"
        assert page.is_checked(f"{editor} [data-key-proof-company]")
        assert page.is_disabled(f"{editor} [data-key-proof-kind='photo']")
        page.uncheck(f"{editor} [data-key-proof-company]")
        page.check(f"{editor} [data-key-proof-kind='photo']")
        page.click(f"[data-key-proof-save='{key['id']}']")
        page.wait_for_selector(editor, state="detached")
        assert page.inner_text(f"[data-key-proof='{key['id']}']") == "photo"
        assert page.evaluate("document.activeElement.dataset.keyProofEdit") == key["id"]
        listed = {k["id"]: k for k in requests.get(keys, headers=owner.headers).json()["keys"]}
        assert listed[key["id"]]["proofRequired"] == ["photo"]
        assert listed[other["id"]]["proofRequired"] is None  # the other key is left as it was

        # Back to the company's setting.
        page.click(f"[data-key-proof-edit='{key['id']}']")
        page.wait_for_selector(editor)
        assert page.is_checked(f"{editor} [data-key-proof-kind='photo']")
        page.check(f"{editor} [data-key-proof-company]")
        page.click(f"[data-key-proof-save='{key['id']}']")
        page.wait_for_selector(editor, state="detached")
        assert page.inner_text(f"[data-key-proof='{key['id']}']") == "the company's setting"
        listed = {k["id"]: k for k in requests.get(keys, headers=owner.headers).json()["keys"]}
        assert listed[key["id"]]["proofRequired"] is None

        # A key revoked elsewhere meanwhile: the API's 404 is shown in the row's editor.
        assert requests.delete(f"{keys}/{other['id']}", headers=owner.headers).status_code == 204
        page.click(f"[data-key-proof-edit='{other['id']}']")
        page.uncheck(f"#key-proof-{other['id']} [data-key-proof-company]")
        page.click(f"[data-key-proof-save='{other['id']}']")
        page.wait_for_selector(f"[data-key-proof-error='{other['id']}']:not(:empty)")
        assert (
            page.inner_text(f"[data-key-proof-error='{other['id']}']")
            == "Could not do it: No such integration key."
        )
        screenshot(page, "console-key-proof")
        assert errors == []
