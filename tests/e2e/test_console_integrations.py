"""Issue 46's Integrations view in a real browser against the real server, in Russian: an owner
creates an integration key (shown once, with focus on it, and gone after a reload), revokes it
after a confirmation, adds a webhook pointed at a closed local port, sees its delivery given up
with its attempts and last error, and sends it again."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import requests

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.app import create_app
from appliance.dispatch.models import IntegrationKey, WebhookDelivery
from appliance.dispatch.models.audit import AuditEntry
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
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


@pytest.fixture
def shop(mapped_data_dir, settings):
    port = free_port()
    app = create_app(settings.replace(dispatch_port=port))
    company = make_company("Arev Express", depot=ROAD_A)
    hashed = hash_password(PASSWORD)
    make_member(app, company, "owner", email="ani@arev.am", password_hash=hashed)
    dispatcher = make_member(app, company, "dispatcher", email="lilit@arev.am", password_hash=hashed)
    # The receiver is a closed port on loopback: allowed as in development, and every attempt fails.
    with serving(mapped_data_dir, port, {"APPLIANCE_WEBHOOK_ALLOW_PRIVATE": "1"}) as url:
        yield url, dispatcher


def until(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError("the server did not get there in time")
        time.sleep(0.1)
    return value


def open_integrations(page) -> None:
    page.click("[data-view-tab='integrations']")
    page.wait_for_selector("#integrations-view:not([hidden])")


def test_an_owner_creates_and_revokes_a_key_and_resends_a_failed_webhook_delivery(shop) -> None:
    url, dispatcher = shop
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ru-RU").new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        sign_in_console(page, url, "ani@arev.am")
        page.click("[data-lang='ru']")
        open_integrations(page)

        # A key: shown once, focused, then never again (not even after a reload).
        page.fill("#key-name", "Магазин Арев")
        page.click("#key-create")
        page.wait_for_selector("#key-shown:not([hidden])")
        key = page.input_value("#key-value")
        assert key.startswith("ik_")
        assert page.evaluate("document.activeElement.id") == "key-value"
        wait_until(page, "document.querySelectorAll('#keys tbody tr').length === 1")
        assert "Скопируйте ключ сейчас" in page.inner_text("#key-shown")
        page.reload()
        page.wait_for_selector("body[data-view='workspace']")
        open_integrations(page)
        wait_until(page, "document.querySelectorAll('#keys tbody tr').length === 1")
        assert page.is_hidden("#key-shown") and key not in page.content()
        assert page.inner_text("[data-key-proof]") == "как у компании"  # issue 47: no default of its own

        # Revoked only after the confirmation; focus goes back into the view.
        page.click("[data-revoke]")
        page.wait_for_selector("#int-confirm-dialog[open]")
        assert "Магазин Арев" in page.inner_text("#int-confirm-text")
        page.click("#int-confirm-yes")
        wait_until(page, "document.querySelectorAll('#keys tbody tr').length === 0")
        assert IntegrationKey.get().revoked_at is not None
        assert page.evaluate("document.activeElement.id") == "key-name"

        # A webhook to a closed port: its secret shown once, then its delivery fails.
        closed = free_port()
        page.fill("#webhook-url", f"https://127.0.0.1:{closed}/hooks/orders")
        page.check("#webhook-events input[value='order.created']")
        page.click("#webhook-add")
        page.wait_for_selector("#secret-shown:not([hidden])")
        assert page.input_value("#secret-value").startswith("whsec_")
        wait_until(page, "document.querySelectorAll('#webhooks li.webhook').length === 1")
        assert requests.post(f"{url}/orders", json=ORDER, headers=dispatcher.headers).status_code == 201
        until(lambda: WebhookDelivery.get_or_none(WebhookDelivery.attempts >= 1))
        # Three days of failures, without waiting for them: the server gives it up at its next turn.
        WebhookDelivery.update(
            created_at=clock.now() - timedelta(days=3, minutes=1), next_attempt_at=clock.now()
        ).execute()
        until(lambda: WebhookDelivery.get().status == "failed")

        page.click("[data-deliveries]")
        page.wait_for_selector("table.deliveries tr[data-status='failed']")
        row = page.inner_text("table.deliveries tbody tr")
        assert "не доставлено" in row and "создан" in row
        assert page.get_attribute("[data-deliveries]", "aria-expanded") == "true"
        # Counted while it is given up: once resent, the server may try it before the test looks.
        attempts = WebhookDelivery.get().attempts
        page.click("[data-resend]")
        page.wait_for_selector("table.deliveries tr[data-status='queued']")
        assert page.evaluate("document.activeElement.dataset.deliveries") is not None
        assert AuditEntry.select().where(AuditEntry.action == "webhook_delivery.resent").count() == 1
        until(lambda: WebhookDelivery.get().attempts > attempts)  # the server tried it once more
        # Every word of the view exists in Armenian, Russian and English.
        missing = page.evaluate(
            """async () => {
                const {TEXTS} = await import('/console/texts.js');
                const keys = [...document.querySelectorAll(
                    '#integrations-view [data-t], #int-confirm-dialog [data-t], [data-view-tab=integrations]'
                )]
                    .map((e) => e.dataset.t)
                    .concat(Object.keys(TEXTS.en).filter((k) => /^(int|delivery_|event_order_)/.test(k)));
                return ['hy', 'ru', 'en'].flatMap(
                    (l) => keys.filter((k) => !TEXTS[l][k]).map((k) => l + ':' + k));
            }"""
        )
        assert missing == []
        screenshot(page, "console-integrations-ru")
        assert errors == []

        # A dispatcher has no such tab (the API would answer 403).
        other = browser.new_context(viewport={"width": 1280, "height": 900}, locale="ru-RU").new_page()
        sign_in_console(other, url, "lilit@arev.am")
        assert other.is_hidden("[data-view-tab='integrations']")
        assert other.is_visible("[data-view-tab='reports']")
