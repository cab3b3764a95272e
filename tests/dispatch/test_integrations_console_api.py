"""The console's view of webhook deliveries (issue 46, beyond the specification): an endpoint's
deliveries with their attempts, and a given-up delivery sent again, by owners only and only within
their own company."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import pytest

from appliance.common import clock
from appliance.dispatch.models import WebhookDelivery
from appliance.dispatch.models.audit import AuditEntry
from appliance.settings import Settings
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER
from tests.dispatch.test_integrations import run_sender, sender_for, subscribe
from tests.engine.tls_receiver import tls_receiver


@pytest.fixture
def receiver(tmp_path: Path):
    (tmp_path / "tls").mkdir()
    with tls_receiver(tmp_path / "tls", path="/hooks/orders") as running:
        yield running


@pytest.fixture
def settings(settings: Settings, receiver) -> Settings:
    # A receiver on loopback with its own CA, allowed as in development.
    return dataclasses.replace(settings, webhook_allow_private=True, webhook_ca_file=str(receiver.ca_file))


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def given_up_delivery(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> tuple[dict, WebhookDelivery]:
    """An order.created delivery that failed for three days and was given up."""
    hook = subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    receiver.answers = [503, 503]
    sender = sender_for(dispatch_app)
    assert run_sender(sender) == 1
    # Three days of failures: the row made older rather than the clock moved (tokens would expire).
    WebhookDelivery.update(
        created_at=clock.now() - timedelta(days=3, minutes=1), next_attempt_at=clock.now()
    ).execute()
    assert run_sender(sender) == 1
    delivery = WebhookDelivery.get()
    assert delivery.status == "failed"
    return hook, delivery


def test_an_owner_sees_an_endpoints_deliveries_newest_first_with_their_attempts_and_last_error(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook = subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    receiver.answers = [500]
    first = dispatch_client.post("/orders", json=ORDER | {"externalRef": "A1"}, headers=dispatcher.headers)
    assert first.status_code == 201
    assert run_sender(sender_for(dispatch_app)) == 1
    dispatch_client.post("/orders", json=ORDER | {"externalRef": "A2"}, headers=dispatcher.headers)
    response = dispatch_client.get(f"/company/webhooks/{hook['id']}/deliveries", headers=owner.headers)
    assert response.status_code == 200
    newer, older = response.json["deliveries"]
    assert int(newer["id"]) > int(older["id"])
    assert newer["status"] == "queued" and newer["attempts"] == 0 and newer["lastError"] is None
    assert older["status"] == "queued" and older["attempts"] == 1 and "HTTP 500" in older["lastError"]
    assert older["eventType"] == "order.created" and older["messageId"].startswith("msg_")
    assert older["nextAttemptAt"] is not None and older["deliveredAt"] is None and older["createdAt"]


def test_a_given_up_delivery_is_resent_once_and_a_second_resend_changes_nothing(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook, delivery = given_up_delivery(dispatch_app, dispatch_client, owner, dispatcher, receiver)
    path = f"/company/webhooks/{hook['id']}/deliveries/{delivery.id}/resend"
    resent = dispatch_client.post(path, headers=owner.headers)
    assert resent.status_code == 200, resent.json
    assert resent.json["status"] == "queued" and resent.json["attempts"] == 2
    again = dispatch_client.post(path, headers=owner.headers)
    assert again.status_code == 200 and again.json == resent.json
    audited = AuditEntry.select().where(AuditEntry.action == "webhook_delivery.resent")
    assert [entry.subject for entry in audited] == [f"webhook_delivery:{delivery.id}"]
    assert run_sender(sender_for(dispatch_app)) == 1  # due at once; the receiver answers 200 now
    assert WebhookDelivery.get().status == "delivered"
    first, _retried, third = receiver.received
    assert first.headers["webhook-id"] == third.headers["webhook-id"]
    delivered = dispatch_client.post(path, headers=owner.headers)
    assert delivered.status_code == 409 and len(receiver.received) == 3


def test_another_companys_endpoint_or_delivery_is_missing_to_an_owner(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook, delivery = given_up_delivery(dispatch_app, dispatch_client, owner, dispatcher, receiver)
    other = make_member(dispatch_app, make_company("Other"), "owner", email="other@x.am")
    own_hook = subscribe(dispatch_client, other.headers, receiver.url, ["order.created"])
    listed = dispatch_client.get(f"/company/webhooks/{hook['id']}/deliveries", headers=other.headers)
    assert listed.status_code == 404 and listed.json["type"].endswith("not-found")
    for path in (
        f"/company/webhooks/{hook['id']}/deliveries/{delivery.id}/resend",
        f"/company/webhooks/{own_hook['id']}/deliveries/{delivery.id}/resend",  # its own endpoint
        f"/company/webhooks/{hook['id']}/deliveries/99999999999999999999/resend",
    ):
        assert dispatch_client.post(path, headers=other.headers).status_code == 404
    assert WebhookDelivery.get().status == "failed"


def test_a_dispatcher_and_an_integration_key_may_not_see_or_resend_deliveries(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook, delivery = given_up_delivery(dispatch_app, dispatch_client, owner, dispatcher, receiver)
    key = dispatch_client.post("/company/integration-keys", json={"name": "Shop"}, headers=owner.headers)
    for headers in (dispatcher.headers, {"Authorization": f"Bearer {key.json['key']}"}):
        listed = dispatch_client.get(f"/company/webhooks/{hook['id']}/deliveries", headers=headers)
        resent = dispatch_client.post(
            f"/company/webhooks/{hook['id']}/deliveries/{delivery.id}/resend", headers=headers
        )
        assert (listed.status_code, resent.status_code) == (403, 403)
    assert WebhookDelivery.get().status == "failed"


def test_a_deleted_endpoints_deliveries_are_missing(dispatch_client, owner, dispatcher, receiver) -> None:
    hook = subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    dispatch_client.delete(f"/company/webhooks/{hook['id']}", headers=owner.headers)
    delivery = WebhookDelivery.get()
    listed = dispatch_client.get(f"/company/webhooks/{hook['id']}/deliveries", headers=owner.headers)
    assert listed.status_code == 404
    path = f"/company/webhooks/{hook['id']}/deliveries/{delivery.id}/resend"
    assert dispatch_client.post(path, headers=owner.headers).status_code == 404
