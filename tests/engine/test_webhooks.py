"""Webhook subscriptions, the outbox and signed deliveries to a real HTTPS receiver."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.jobs import run_worker
from appliance.engine import protocol
from appliance.engine.client import verify_webhook
from appliance.engine.db import database
from appliance.engine.deposits.watcher import DepositWatcher
from appliance.engine.models import WebhookDelivery
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, emit
from appliance.engine.webhooks.sender import WebhookSender
from appliance.settings import Settings
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import ETHER, Harness, harness_settings, make_harness
from tests.engine.tls_receiver import Receiver, tls_receiver


@pytest.fixture
def receiver(tmp_path: Path):
    (tmp_path / "tls").mkdir()
    with tls_receiver(tmp_path / "tls") as running:
        yield running


def _harness(settings: Settings, receiver: Receiver, **environ: str) -> Harness:
    env = {
        "APPLIANCE_WEBHOOK_ALLOW_PRIVATE": "1",
        "APPLIANCE_WEBHOOK_CA_FILE": str(receiver.ca_file),
        **environ,
    }
    return make_harness(
        harness_settings(settings, env),
        lambda app: app.extensions["engine"].chains.get("eth_local").mine(),
    )


def subscribe(harness: Harness, url: str, types: list[str] | None = None, signer: Signer | None = None):
    payload: dict = {"endpointUrl": url}
    if types is not None:
        payload["eventTypes"] = types
    return (signer or harness.signer).request("POST", "/v1/webhooks/subscriptions", payload)


def sender_of(harness: Harness, *, allow_private: bool = True, ca_file: str | None = None) -> WebhookSender:
    settings = harness.app.extensions["engine"].settings
    return WebhookSender(
        harness.app.extensions["engine"].master_key,
        ca_file=settings.webhook_ca_file if ca_file is None else ca_file,
        allow_private=allow_private,
    )


def confirmed_deposit(harness: Harness) -> str:
    """A confirmed ETH deposit of 1 ETH to customer-1's address; returns the transaction hash."""
    address = harness.signer.request(
        "POST", "/v1/deposit-addresses", {"accountRef": "customer-1", "chainId": "eth_local"}
    ).json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    tx_hash, _ = chain.faucet("ETH", address, ETHER)
    chain.mine()
    watcher = DepositWatcher(harness.app.extensions["engine"].chains)
    with database.connection_context():
        watcher.run_pass()
    return tx_hash


def run_sender(sender: WebhookSender) -> int:
    """One pass, and every delivery it started carried to its end; returns how many it started."""
    with database.connection_context():
        started = sender.run_pass()
    sender.wait()
    return started


def test_subscribing_answers_the_secret_once_and_lists_the_active_subscriptions(
    settings: Settings, receiver: Receiver
) -> None:
    harness = _harness(settings, receiver)
    created = subscribe(harness, receiver.url)
    assert created.status_code == 201
    body = created.json
    assert len(body["secret"]) >= 32 and body["endpointUrl"] == receiver.url
    assert sorted(s["eventType"] for s in body["subscriptions"]) == [
        "deposit.confirmed",
        "deposit.retracted",
        "payout.completed",
        "payout.failed",
    ]
    assert all(s["subscriptionId"].startswith("wsub_") for s in body["subscriptions"])
    again = subscribe(harness, receiver.url, ["deposit.confirmed"])
    assert again.status_code == 200 and again.json["secret"] is None
    listed = harness.signer.request("GET", "/v1/webhooks/subscriptions").json
    assert listed["operatorId"] == "op_alpha0001"
    assert sorted(s["subscriptionId"] for s in listed["subscriptions"]) == sorted(
        s["subscriptionId"] for s in body["subscriptions"]
    )
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    assert other.request("GET", "/v1/webhooks/subscriptions").json["subscriptions"] == []


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://100.64.0.1/hook",
        "https://user:pw@example.com/hook",
        "https://[/hook",  # urlsplit refuses it with a ValueError: was a 500
        "https://[example.com]/hook",
    ],
)
def test_private_targets_and_plain_http_are_refused_when_subscribing(
    settings: Settings, receiver: Receiver, url: str
) -> None:
    harness = _harness(settings, receiver, APPLIANCE_WEBHOOK_ALLOW_PRIVATE="0")
    response = subscribe(harness, url)
    assert response.status_code == 400, url
    assert response.json["detail"]


def test_a_refused_subscription_never_names_the_address_its_host_resolves_to(
    settings: Settings, receiver: Receiver
) -> None:
    """The answer says the host is refused, not where it points inside the network (issue 41)."""
    harness = _harness(settings, receiver, APPLIANCE_WEBHOOK_ALLOW_PRIVATE="0")
    response = subscribe(harness, "https://localhost/hook")  # resolves to 127.0.0.1 and ::1
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert "refused" in response.json["detail"]
    assert "127.0.0.1" not in text and "::1" not in text, text


def test_an_unknown_event_type_is_400(settings: Settings, receiver: Receiver) -> None:
    harness = _harness(settings, receiver)
    assert subscribe(harness, receiver.url, ["payout.exploded"]).status_code == 400
    assert subscribe(harness, receiver.url, []).status_code == 400


def test_a_confirmed_deposit_is_delivered_once_signed_and_verifiable_by_the_receiver(
    settings: Settings, receiver: Receiver
) -> None:
    harness = _harness(settings, receiver)
    secret = subscribe(harness, receiver.url, ["deposit.confirmed"]).json["secret"]
    tx_hash = confirmed_deposit(harness)
    sender = sender_of(harness)
    assert run_sender(sender) == 1
    assert run_sender(sender) == 0  # delivered: never again
    assert len(receiver.received) == 1
    [got] = receiver.received
    assert got.path == "/hooks/engine"
    assert verify_webhook(secret, got.headers, got.path, got.body)
    assert not verify_webhook(secret, got.headers, got.path, got.body + b" ")
    assert not verify_webhook(secret, got.headers, "/other/path", got.body)
    assert not verify_webhook("another secret", got.headers, got.path, got.body)
    event = json.loads(got.body)
    assert event["type"] == "deposit.confirmed" and event["eventId"] == got.headers["x-webhook-event-id"]
    assert event["data"]["txHash"] == tx_hash and event["data"]["status"] == "CONFIRMED"
    assert event["data"]["accountRef"] == "customer-1" and event["data"]["amountMinor"] == str(ETHER)
    assert got.headers["x-webhook-id"].startswith("dlv_")


def test_redelivery_after_500s_and_a_timeout_keeps_the_event_id_and_the_webhook_id(
    settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The receiver hangs 8 s; the attempts that answer must fit a TLS handshake in the bound on
    # a busy machine (1 s was not always enough).
    monkeypatch.setattr(transport, "TIMEOUT_SECONDS", 3)
    harness = _harness(settings, receiver)
    secret = subscribe(harness, receiver.url).json["secret"]
    confirmed_deposit(harness)
    receiver.answers.extend([500, "hang:8", 302])  # a redirect is a failure: never followed
    sender = sender_of(harness)
    for _ in range(4):
        run_sender(sender)
        clock.advance(timedelta(hours=7))  # past any back-off
    assert len(receiver.received) == 4
    assert len({r.headers["x-webhook-event-id"] for r in receiver.received}) == 1
    # Standard Webhooks: the message id stays the same across attempts (receivers deduplicate on it)
    assert len({r.headers["x-webhook-id"] for r in receiver.received}) == 1
    assert all(
        verify_webhook(secret, r.headers, r.path, r.body, now=int(r.headers["x-webhook-timestamp"]))
        for r in receiver.received
    )
    with database.connection_context():
        delivery = WebhookDelivery.get()
    assert delivery.status == "delivered" and delivery.attempts == 4


def test_a_name_resolving_to_a_private_address_at_delivery_time_is_never_called(
    settings: Settings, receiver: Receiver
) -> None:
    harness = _harness(settings, receiver)  # accepted while private targets were allowed
    subscribe(harness, receiver.url)
    confirmed_deposit(harness)
    run_sender(sender_of(harness, allow_private=False))
    assert receiver.received == []
    with database.connection_context():
        delivery = WebhookDelivery.get()
    assert delivery.status == "queued" and "non-public" in delivery.last_error


def test_an_unknown_certificate_authority_is_refused(settings: Settings, receiver: Receiver) -> None:
    harness = _harness(settings, receiver)
    subscribe(harness, receiver.url)
    confirmed_deposit(harness)
    run_sender(sender_of(harness, ca_file=""))  # the system store alone does not know it
    assert receiver.received == []
    with database.connection_context():
        assert "CERTIFICATE_VERIFY_FAILED" in WebhookDelivery.get().last_error


def test_an_endpoint_failing_for_three_days_is_disabled_and_subscribing_again_reactivates_it(
    settings: Settings, receiver: Receiver
) -> None:
    harness = _harness(settings, receiver)
    subscribe(harness, receiver.url)
    confirmed_deposit(harness)
    receiver.answers.extend([500] * 100)
    sender = sender_of(harness)
    for _ in range(16):
        run_sender(sender)
        clock.advance(timedelta(hours=6, minutes=30))
    assert harness.signer.request("GET", "/v1/webhooks/subscriptions").json["subscriptions"] == []
    with database.connection_context():
        assert WebhookDelivery.get().status == "failed"
    listed = CliRunner().invoke(
        cli,
        ["webhook", "list", "--data-dir", str(harness.app.extensions["engine"].settings.data_dir), "--json"],
    )
    [endpoint] = json.loads(listed.stdout)["endpoints"]
    assert endpoint["active"] is False and "HTTP 500" in endpoint["lastError"]
    assert subscribe(harness, receiver.url).status_code == 200
    assert len(harness.signer.request("GET", "/v1/webhooks/subscriptions").json["subscriptions"]) == 4


def test_the_signed_input_is_framed_so_that_fields_cannot_slide_into_each_other() -> None:
    assert protocol.signed_input("dlv_1", "100", "/a", b"x") != protocol.signed_input(
        "dlv_1", "100", "/ax", b""
    )
    assert protocol.signed_input("dlv_1", "1001", "/a", b"") != protocol.signed_input(
        "dlv_11", "001", "/a", b""
    )
    with pytest.raises(ValueError):
        protocol.signed_input("dlv_1", "100", "/a\nb", b"")
    headers = {"x-webhook-id": "dlv_1", "x-webhook-timestamp": "1000", "x-webhook-signature": "v1=00"}
    assert not protocol.verify("s", headers, "/a", b"", now=1000 + 301)  # stale: refused before any HMAC
    headers["x-webhook-signature"] = protocol.sign("s", "dlv_1", "1000", "/a", b"")
    assert protocol.verify("s", headers, "/a", b"", now=1000 + 299)
    assert protocol.verify("s", headers, "/a", b"", now=1000 - 299)
    assert not protocol.verify("s", headers, "/a", b"", now=1000 - 301)


def test_an_operator_receives_only_its_own_events(settings: Settings, receiver: Receiver) -> None:
    harness = _harness(settings, receiver)
    subscribe(harness, receiver.url)
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    other_url = receiver.url.replace("/hooks/engine", "/hooks/beta")
    assert subscribe(harness, other_url, signer=other).status_code == 201
    confirmed_deposit(harness)  # the first operator's deposit
    run_sender(sender_of(harness))
    assert [r.path for r in receiver.received] == ["/hooks/engine"]


def _emit(operator_id: str, n: int) -> None:
    with database.connection_context(), write_transaction(database):
        emit(operator_id, DEPOSIT_CONFIRMED, {"n": n})


def _wait_for(condition, what: str, seconds: float = 30) -> None:
    """A liveness bound, not a measurement: fail rather than hang when ``condition`` never holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.02)


def test_a_receiver_that_never_answers_holds_up_no_other_operators_deliveries(
    settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29 item 14: the sender waited for its whole batch, so one receiver that never answered
    held every other delivery; and a backlog to one slow endpoint took every place of the pool."""
    monkeypatch.setattr(transport, "TIMEOUT_SECONDS", 120)  # the held receiver is released by the test
    harness = _harness(settings, receiver)
    slow_path, fast_path = "/hooks/slow", "/hooks/fast"
    held = threading.Event()
    receiver.held[slow_path] = held
    subscribe(harness, receiver.url.replace("/hooks/engine", slow_path), ["deposit.confirmed"])
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    subscribe(harness, receiver.url.replace("/hooks/engine", fast_path), ["deposit.confirmed"], signer=other)
    for n in range(12):  # a backlog for the slow receiver, older than anything for the fast one
        _emit("op_alpha0001", n)
    sender = sender_of(harness)
    stop = threading.Event()
    worker = threading.Thread(
        target=run_worker, args=("webhooks", database, stop, sender.run_pass), kwargs={"idle_seconds": 0.05}
    )
    worker.start()
    try:
        _wait_for(lambda: any(r.path == slow_path for r in receiver.received), "the slow receiver called")
        _emit(other_op["operatorId"], 100)  # a new event while the slow receiver holds its requests
        _wait_for(
            lambda: any(r.path == fast_path for r in receiver.received),
            "the other operator's delivery made while the slow receiver is held",
        )
        assert sum(r.path == slow_path for r in receiver.received) <= 2  # two places, not the pool
    finally:
        held.set()
        stop.set()
        worker.join()
        sender.wait()


def test_an_attempt_is_bounded_as_a_whole_not_per_socket_read(
    settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receiver trickling its answer a byte at a time never let a per-read timeout fire: the
    attempt lasted as long as the receiver liked. Now the attempt as a whole has the time limit."""
    monkeypatch.setattr(transport, "TIMEOUT_SECONDS", 1)  # the trickle lasts 8 s, 0.2 s a byte
    harness = _harness(settings, receiver)
    subscribe(harness, receiver.url)
    confirmed_deposit(harness)
    receiver.answers.append("trickle")
    run_sender(sender_of(harness))
    with database.connection_context():
        delivery = WebhookDelivery.get()
    assert delivery.status == "queued" and delivery.attempts == 1
    assert "no answer within 1 s" in delivery.last_error
