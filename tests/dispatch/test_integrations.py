"""Shops as integrations (issue 27 item 4): integration keys, webhook endpoints and signed order
webhooks delivered to a real HTTPS receiver with its own certificate authority."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag

from appliance.common import clock
from appliance.common.keys import unseal
from appliance.dispatch.db import database
from appliance.dispatch.integrations import signing
from appliance.dispatch.integrations.sender import OrderWebhookSender
from appliance.dispatch.integrations.service import SECRET_PURPOSE
from appliance.dispatch.models import CompanyWebhook, IntegrationKey, Order, WebhookDelivery, WebhookMessage
from appliance.settings import Settings
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import ORDER, courier_status
from tests.engine.tls_receiver import Receiver, tls_receiver

ALL_EVENTS = [
    "order.created",
    "order.assigned",
    "order.picked_up",
    "order.delivered",
    "order.failed",
    "order.cancelled",
]


@pytest.fixture
def receiver(tmp_path: Path):
    (tmp_path / "tls").mkdir()
    with tls_receiver(tmp_path / "tls", path="/hooks/orders") as running:
        yield running


@pytest.fixture
def settings(settings: Settings, receiver: Receiver) -> Settings:
    # The receiver listens on loopback: allowed here as in development (APPLIANCE_WEBHOOK_ALLOW_PRIVATE),
    # and its certificate is trusted through the CA file, as an operator's private CA would be.
    return dataclasses.replace(settings, webhook_allow_private=True, webhook_ca_file=str(receiver.ca_file))


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def new_key(client, owner, name: str = "Shop") -> dict:
    response = client.post("/company/integration-keys", json={"name": name}, headers=owner.headers)
    assert response.status_code == 201, response.json
    return response.json


def subscribe(client, headers: dict[str, str], url: str, events: list[str] | None = None) -> dict:
    response = client.post(
        "/company/webhooks", json={"url": url, "events": events or ALL_EVENTS}, headers=headers
    )
    assert response.status_code == 201, response.json
    return response.json


def sender_for(dispatch_app) -> OrderWebhookSender:
    runtime = dispatch_app.extensions["dispatch"]
    return OrderWebhookSender(
        runtime.master_key,
        ca_file=runtime.settings.webhook_ca_file,
        allow_private=runtime.settings.webhook_allow_private,
    )


def run_sender(sender: OrderWebhookSender) -> int:
    """One pass, every delivery it started carried to its end; how many it started."""
    with database.connection_context():
        started = sender.run_pass()
    sender.wait()
    return started


def receiver_verifies(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The receiver snippet of docs/integrations.md, standard library only (kept identical)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(hmac.compare_digest(expected, s) for s in headers["webhook-signature"].split())


# -- keys ---------------------------------------------------------------------------------------------


def test_an_owner_creates_a_key_shown_once_lists_keys_without_it_and_it_rests_as_a_hash(
    dispatch_client, owner
) -> None:
    created = new_key(dispatch_client, owner, "Shop Arev")
    assert set(created) == {"id", "name", "key", "createdAt", "proofRequired"}
    assert created["name"] == "Shop Arev" and created["key"].startswith("ik_") and len(created["key"]) > 40
    listed = dispatch_client.get("/company/integration-keys", headers=owner.headers)
    assert listed.status_code == 200
    assert listed.json == {
        "keys": [
            {
                "id": created["id"],
                "name": "Shop Arev",
                "createdAt": created["createdAt"],
                "proofRequired": None,
            }
        ]
    }
    row = IntegrationKey.get_by_id(int(created["id"]))
    assert row.key_hash == hashlib.sha256(created["key"].encode()).hexdigest()
    assert created["key"] not in json.dumps(
        [list(r) for r in database.execute_sql("SELECT * FROM integration_key")], default=str
    )


@pytest.mark.parametrize("role", ["dispatcher", "courier"])
def test_only_owners_manage_integration_keys(dispatch_app, dispatch_client, company, owner, role) -> None:
    member = make_member(dispatch_app, company, role)
    key = new_key(dispatch_client, owner)
    assert (
        dispatch_client.post(
            "/company/integration-keys", json={"name": "x"}, headers=member.headers
        ).status_code
        == 403
    )
    assert dispatch_client.get("/company/integration-keys", headers=member.headers).status_code == 403
    assert (
        dispatch_client.delete(f"/company/integration-keys/{key['id']}", headers=member.headers).status_code
        == 403
    )
    assert (
        dispatch_client.post(
            "/company/webhooks", json={"url": "https://x.am/h", "events": ALL_EVENTS}, headers=member.headers
        ).status_code
        == 403
    )


def test_a_key_cannot_manage_keys_nor_use_routes_outside_its_scope(dispatch_client, owner, courier) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    order = dispatch_client.post("/orders", json=ORDER, headers=key).json["order"]
    refused = [
        dispatch_client.get("/company/integration-keys", headers=key),
        dispatch_client.post("/company/integration-keys", json={"name": "more"}, headers=key),
        dispatch_client.patch(f"/orders/{order['id']}", json={"recipientName": "X"}, headers=key),
        dispatch_client.post(f"/orders/{order['id']}/status", json={"status": "ready"}, headers=key),
        dispatch_client.get("/company", headers=key),
        dispatch_client.get("/company/depots", headers=key),  # any member (B): not a key
        dispatch_client.get("/couriers", headers=key),
        dispatch_client.get("/courier/orders", headers=key),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert all("integration key" in r.json["detail"] for r in refused)


def test_a_revoked_key_is_refused_at_once(dispatch_client, owner) -> None:
    created = new_key(dispatch_client, owner)
    key = bearer(created["key"])
    assert dispatch_client.get("/orders", headers=key).status_code == 200
    assert (
        dispatch_client.delete(
            f"/company/integration-keys/{created['id']}", headers=owner.headers
        ).status_code
        == 204
    )
    refused = dispatch_client.get("/orders", headers=key)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Bearer"
    assert dispatch_client.post("/orders", json=ORDER, headers=key).status_code == 401
    assert dispatch_client.get("/company/integration-keys", headers=owner.headers).json == {"keys": []}
    again = dispatch_client.delete(f"/company/integration-keys/{created['id']}", headers=owner.headers)
    assert again.status_code == 404
    assert dispatch_client.get("/orders", headers=bearer("ik_" + "A" * 43)).status_code == 401


def test_a_key_of_another_company_gets_404_on_this_companys_orders(
    dispatch_app, dispatch_client, owner
) -> None:
    mine = bearer(new_key(dispatch_client, owner)["key"])
    order = dispatch_client.post("/orders", json=ORDER, headers=mine).json["order"]
    other_owner = make_member(dispatch_app, make_company("Other"), "owner")
    theirs = bearer(new_key(dispatch_client, other_owner)["key"])
    assert dispatch_client.get(f"/orders/{order['id']}", headers=theirs).status_code == 404
    assert dispatch_client.get(f"/orders/{order['id']}", headers=mine).status_code == 200
    assert dispatch_client.get("/orders", headers=theirs).json["orders"] == []
    # Nor can it reach the first company's keys or webhooks.
    first_keys = dispatch_client.get("/company/integration-keys", headers=owner.headers).json["keys"]
    assert (
        dispatch_client.delete(
            f"/company/integration-keys/{first_keys[0]['id']}", headers=other_owner.headers
        ).status_code
        == 404
    )


def test_a_key_creates_orders_and_imports_a_file_as_no_user(dispatch_client, owner) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    created = dispatch_client.post("/orders", json=ORDER | {"externalRef": "SHOP-1"}, headers=key)
    assert created.status_code == 201
    order_id = int(created.json["order"]["id"])
    assert Order.get_by_id(order_id).company_id == owner.membership.company_id
    events = dispatch_client.get(f"/orders/{order_id}/events", headers=owner.headers).json["events"]
    assert events[0]["kind"] == "created" and events[0]["actorUserId"] is None
    csv = (
        "externalRef,recipientName,recipientPhone,amountAmd,addressLabelHy,lat,lon\n"
        "SHOP-1,Gayane,+37491123456,5000,Աբովյան 10,40.1812,44.5140\n"
        "SHOP-2,Aram,+37491123457,3000,Աբովյան 12,40.1813,44.5141\n"
    )
    imported = dispatch_client.post("/orders/import", data=csv.encode(), content_type="text/csv", headers=key)
    assert imported.status_code == 200, imported.json
    assert (imported.json["created"], imported.json["existing"]) == (1, 1)


# -- webhook endpoints ---------------------------------------------------------------------------------


def test_webhooks_are_managed_by_owners_and_keys_with_the_secret_shown_once_and_encrypted_at_rest(
    dispatch_app, dispatch_client, owner, receiver
) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    created = subscribe(dispatch_client, key, receiver.url, ["order.delivered", "order.created"])
    assert created["events"] == ["order.created", "order.delivered"]
    assert created["secret"].startswith("whsec_") and len(base64.b64decode(created["secret"][6:])) == 32
    listed = dispatch_client.get("/company/webhooks", headers=owner.headers).json["webhooks"]
    assert [w["id"] for w in listed] == [created["id"]] and "secret" not in listed[0]
    row = CompanyWebhook.get_by_id(int(created["id"]))
    assert created["secret"].encode() not in bytes(row.secret_cipher)
    master_key = dispatch_app.extensions["dispatch"].master_key
    assert (
        unseal(master_key, SECRET_PURPOSE, f"{row.company_id}/{row.id}", row.secret_cipher)
        == created["secret"]
    )
    with pytest.raises(InvalidTag):  # bound to its row: moved to another, it does not open
        unseal(master_key, SECRET_PURPOSE, f"{row.company_id}/{row.id + 1}", row.secret_cipher)
    other = make_member(dispatch_app, make_company("Other"), "owner")
    assert (
        dispatch_client.delete(f"/company/webhooks/{created['id']}", headers=other.headers).status_code == 404
    )
    assert dispatch_client.delete(f"/company/webhooks/{created['id']}", headers=key).status_code == 204
    assert dispatch_client.get("/company/webhooks", headers=key).json == {"webhooks": []}
    assert dispatch_client.delete(f"/company/webhooks/{created['id']}", headers=key).status_code == 404


@pytest.mark.parametrize(
    ("url", "events", "status"),
    [
        ("http://example.com/hook", ALL_EVENTS, 400),  # not https: the schema's pattern
        ("https://user:pw@example.com/hook", ALL_EVENTS, 400),
        ("https://[/hook", ALL_EVENTS, 400),  # urlsplit's ValueError: was a 500 (the contract tests)
        ("https://[example.com]/hook", ALL_EVENTS, 400),
        ("https://example.com/hook", [], 422),  # a list with fewer items than it allows
        ("https://example.com/hook", ["order.updated"], 400),
    ],
)
def test_webhook_endpoints_must_be_https_with_known_events(
    dispatch_client, owner, url, events, status
) -> None:
    response = dispatch_client.post(
        "/company/webhooks", json={"url": url, "events": events}, headers=owner.headers
    )
    assert response.status_code == status, response.json
    assert CompanyWebhook.select().count() == 0


def test_webhook_endpoints_on_private_addresses_are_refused_as_by_the_payout_engine(
    settings: Settings,
) -> None:
    from appliance.dispatch.app import create_app

    app = create_app(dataclasses.replace(settings, webhook_allow_private=False))  # the default
    client, owner = app.test_client(), make_member(app, make_company("Arev"), "owner")
    for url in (
        "https://127.0.0.1/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest",
        "https://localhost/x",
    ):
        response = client.post(
            "/company/webhooks", json={"url": url, "events": ALL_EVENTS}, headers=owner.headers
        )
        assert response.status_code == 400 and "non-public" in response.json["detail"], url
    assert CompanyWebhook.select().count() == 0


def test_a_refused_webhook_host_is_not_told_what_it_resolves_to(settings: Settings) -> None:
    from appliance.dispatch.app import create_app

    app = create_app(dataclasses.replace(settings, webhook_allow_private=False))
    client, owner = app.test_client(), make_member(app, make_company("Arev"), "owner")
    body = {"url": "https://localhost/hook", "events": ALL_EVENTS}  # localhost: 127.0.0.1 and ::1
    response = client.post("/company/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 400 and "refused" in response.json["detail"]
    assert "127.0.0.1" not in response.text and "::1" not in response.text, response.text


# -- outbound order webhooks ------------------------------------------------------------------------------


def test_a_shops_key_creates_an_order_and_its_receiver_gets_the_signed_order_delivered_once(
    dispatch_app, dispatch_client, owner, dispatcher, courier, receiver
) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    hook = subscribe(dispatch_client, key, receiver.url, ["order.delivered"])
    order = dispatch_client.post("/orders", json=ORDER | {"externalRef": "SHOP-77"}, headers=key).json[
        "order"
    ]
    assert (
        dispatch_client.post(
            f"/orders/{order['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
        ).status_code
        == 200
    )
    assign = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    assert assign.status_code == 201
    assert courier_status(dispatch_client, courier, order["id"], status="picked_up").status_code == 200
    assert WebhookMessage.select().count() == 0  # nothing it did not ask for is queued
    assert courier_status(dispatch_client, courier, order["id"], status="delivered").status_code == 200

    sender = sender_for(dispatch_app)
    assert run_sender(sender) == 1
    assert run_sender(sender) == 0  # delivered: never sent twice
    assert len(receiver.received) == 1
    got = receiver.received[0]
    assert got.path == "/hooks/orders" and got.headers["content-type"] == "application/json"
    assert receiver_verifies(hook["secret"], got.headers, got.body)
    assert signing.verify(hook["secret"], got.headers, got.body)
    assert not signing.verify(hook["secret"], got.headers, got.body + b" ")
    assert not receiver_verifies(signing.new_secret(), got.headers, got.body)
    event = json.loads(got.body)
    assert event["type"] == "order.delivered"
    assert event["data"]["order"]["id"] == order["id"]
    assert event["data"]["order"]["externalRef"] == "SHOP-77"
    assert event["data"]["order"]["status"] == "delivered"
    assert got.headers["webhook-id"].startswith("msg_")
    assert WebhookDelivery.get().status == "delivered"


def test_every_order_change_is_announced_in_order_to_the_events_subscribed(
    dispatch_app, dispatch_client, owner, dispatcher, courier, receiver
) -> None:
    subscribe(dispatch_client, owner.headers, receiver.url)
    first = dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers).json["order"]
    dispatch_client.post(
        f"/orders/{first['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    dispatch_client.post(
        f"/orders/{first['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    courier_status(dispatch_client, courier, first["id"], status="picked_up")
    courier_status(dispatch_client, courier, first["id"], status="failed", failureReason="recipient_absent")
    second = dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers).json["order"]
    dispatch_client.post(
        f"/orders/{second['id']}/status", json={"status": "cancelled"}, headers=dispatcher.headers
    )
    messages = [
        (json.loads(m.payload)["data"]["order"]["id"], m.event_type)
        for m in WebhookMessage.select().order_by(WebhookMessage.id)
    ]
    assert messages == [
        (first["id"], "order.created"),
        (first["id"], "order.assigned"),
        (first["id"], "order.picked_up"),
        (first["id"], "order.failed"),
        (second["id"], "order.created"),
        (second["id"], "order.cancelled"),
    ]
    assigned = json.loads(WebhookMessage.get(WebhookMessage.event_type == "order.assigned").payload)
    assert assigned["data"]["order"]["courierId"] == str(courier.courier.id)
    sender = sender_for(dispatch_app)
    while run_sender(sender):
        pass
    assert sorted(json.loads(r.body)["type"] for r in receiver.received) == sorted(t for _, t in messages)


def test_a_failed_attempt_is_retried_later_with_the_same_webhook_id(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook = subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    receiver.answers = [500]
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    sender = sender_for(dispatch_app)
    assert run_sender(sender) == 1
    delivery = WebhookDelivery.get()
    assert delivery.status == "queued" and delivery.attempts == 1 and "HTTP 500" in delivery.last_error
    assert run_sender(sender) == 0  # backed off: not due yet
    listed = dispatch_client.get("/company/webhooks", headers=owner.headers).json["webhooks"][0]
    assert listed["failingSince"] is not None and "HTTP 500" in listed["lastError"]
    clock.freeze(clock.now() + timedelta(minutes=1))
    assert run_sender(sender) == 1
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.body == second.body
    assert signing.verify(
        hook["secret"], second.headers, second.body, now=int(second.headers["webhook-timestamp"])
    )
    assert WebhookDelivery.get().status == "delivered"
    listed = dispatch_client.get("/company/webhooks", headers=owner.headers).json["webhooks"][0]
    assert listed["failingSince"] is None and listed["lastError"] is None


def test_a_delivery_failing_for_three_days_is_given_up(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    receiver.answers = [503, 503]
    sender = sender_for(dispatch_app)
    assert run_sender(sender) == 1
    clock.freeze(clock.now() + timedelta(days=3, minutes=1))
    assert run_sender(sender) == 1
    delivery = WebhookDelivery.get()
    assert delivery.status == "failed" and "HTTP 503" in delivery.last_error
    assert run_sender(sender) == 0


def test_deleting_an_endpoint_gives_up_its_queued_deliveries(
    dispatch_app, dispatch_client, owner, dispatcher, receiver
) -> None:
    hook = subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    assert dispatch_client.delete(f"/company/webhooks/{hook['id']}", headers=owner.headers).status_code == 204
    assert run_sender(sender_for(dispatch_app)) == 0
    assert receiver.received == [] and WebhookDelivery.get().status == "failed"
    dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    assert WebhookDelivery.select().count() == 1  # nothing queued for a deleted endpoint


def test_a_refused_order_change_announces_nothing(dispatch_client, owner, dispatcher, receiver) -> None:
    subscribe(dispatch_client, owner.headers, receiver.url)
    taken = dispatch_client.post("/orders", json=ORDER | {"externalRef": "A1"}, headers=dispatcher.headers)
    assert taken.status_code == 201
    again = dispatch_client.post("/orders", json=ORDER | {"externalRef": "A1"}, headers=dispatcher.headers)
    assert again.status_code == 409
    order_id = taken.json["order"]["id"]
    illegal = dispatch_client.post(
        f"/orders/{order_id}/status", json={"status": "failed"}, headers=dispatcher.headers
    )
    assert illegal.status_code == 409
    assert [m.event_type for m in WebhookMessage.select()] == ["order.created"]


def test_signatures_follow_the_standard_webhooks_reference_vector() -> None:
    # The test vector of the Standard Webhooks reference libraries.
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    signature = signing.sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)
    assert signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    headers = {
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,bad v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    }
    assert signing.verify(secret, headers, body, now=1614265330 + 10)
    assert receiver_verifies(secret, headers, body)
    assert not signing.verify(secret, headers, body, now=1614265330 + 301)  # stale


def test_queued_order_webhooks_are_counted_in_the_metrics(
    dispatch_client, owner, dispatcher, receiver
) -> None:
    from tests.common.test_metrics import _samples

    subscribe(dispatch_client, owner.headers, receiver.url, ["order.created"])
    for _ in range(2):
        dispatch_client.post("/orders", json=ORDER, headers=dispatcher.headers)
    samples = _samples(dispatch_client)
    assert samples[("appliance_queue_depth", frozenset({"queue": "order_webhooks"}.items()))] == 2


def test_the_openapi_document_describes_keys_webhooks_and_which_routes_take_a_key(dispatch_client) -> None:
    paths = dispatch_client.get("/openapi.json").json["paths"]
    assert set(paths["/company/integration-keys"]) == {"get", "post"}
    assert "201" in paths["/company/integration-keys"]["post"]["responses"]
    assert "204" in paths["/company/integration-keys/{key_id}"]["delete"]["responses"]
    assert set(paths["/company/webhooks"]) == {"get", "post"}
    assert {"201", "400", "401", "403", "422"} <= set(paths["/company/webhooks"]["post"]["responses"])
    takes_keys = [
        (path, method)
        for path, operations in paths.items()
        for method, operation in operations.items()
        if "integration keys" in operation.get("description", "")
    ]
    assert sorted(takes_keys) == [
        ("/company/webhooks", "get"),
        ("/company/webhooks", "post"),
        ("/company/webhooks/{webhook_id}", "delete"),
        ("/orders", "get"),
        ("/orders", "post"),
        ("/orders/import", "post"),
        ("/orders/{order_id}", "get"),
        ("/orders/{order_id}/proof", "get"),
        ("/statements", "get"),  # a shop's own statement, keys only (docs/statements.md)
        ("/statements.csv", "get"),
    ]


def test_an_import_announces_each_created_order_and_an_endpoint_added_later_gets_later_changes(
    dispatch_client, owner, dispatcher, receiver
) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    csv = "externalRef,recipientName,recipientPhone,amountAmd,addressLabelHy,lat,lon\n" + "".join(
        f"I-{n},Ani,+3749112345{n},1000,Աբովյան {n},40.1812,44.5140\n" for n in range(3)
    )
    assert (
        dispatch_client.post("/orders/import", data=csv.encode(), content_type="text/csv", headers=key).json[
            "created"
        ]
        == 3
    )
    assert WebhookMessage.select().count() == 0  # no endpoint yet: nothing queued
    subscribe(dispatch_client, key, receiver.url, ["order.created"])
    more = csv.replace("I-", "J-")
    assert (
        dispatch_client.post("/orders/import", data=more.encode(), content_type="text/csv", headers=key).json[
            "created"
        ]
        == 3
    )
    refs = sorted(json.loads(m.payload)["data"]["order"]["externalRef"] for m in WebhookMessage.select())
    assert refs == ["J-0", "J-1", "J-2"]
    assert WebhookDelivery.select().where(WebhookDelivery.status == "queued").count() == 3


def test_a_keys_orders_arrive_ready_only_when_the_company_opted_in(dispatch_client, owner) -> None:
    key = bearer(new_key(dispatch_client, owner)["key"])
    draft = dispatch_client.post("/orders", json=ORDER, headers=key)
    assert draft.json["order"]["status"] == "draft"  # the specification's POST /orders
    by_hand = dispatch_client.post("/orders", json=ORDER, headers=owner.headers)
    dispatch_client.patch(
        "/company/order-settings", json={"integrationOrdersReady": True}, headers=owner.headers
    )
    ready = dispatch_client.post("/orders", json=ORDER, headers=key)
    assert ready.status_code == 201 and ready.json["order"]["status"] == "ready"
    # A dispatcher's POST /orders stays a draft whatever the setting.
    assert by_hand.json["order"]["status"] == "draft"
    assert (
        dispatch_client.post("/orders", json=ORDER, headers=owner.headers).json["order"]["status"] == "draft"
    )
