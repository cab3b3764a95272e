"""Batches of webhook deliveries (common/webhook_pool.py) by both services' senders, to a real
HTTPS receiver: one TLS connection and one secret decryption per batch, one counted attempt per
delivery row per attempt, and nothing lost or recorded twice when a batch fails part-way."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from appliance.common import clock, webhook_pool
from appliance.common.db import write_transaction
from appliance.common.webhook_pool import DeliveryPool
from appliance.dispatch.db import database as dispatch_database
from appliance.dispatch.integrations import sender as order_sender_module
from appliance.dispatch.integrations.outbox import ORDER_EVENTS
from appliance.dispatch.integrations.sender import OrderWebhookSender
from appliance.dispatch.integrations.service import create_webhook
from appliance.dispatch.models import WebhookDelivery as OrderDelivery
from appliance.dispatch.models import WebhookMessage
from appliance.engine.app import create_app as create_engine_app
from appliance.engine.db import database as engine_database
from appliance.engine.webhooks import sender as engine_sender_module
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, emit
from appliance.engine.webhooks.sender import WebhookSender
from appliance.settings import Settings
from tests.dispatch.factory import make_company
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import harness_settings
from tests.engine.tls_receiver import Receiver, tls_receiver


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    (tmp_path / "tls").mkdir()
    with tls_receiver(tmp_path / "tls") as running:
        yield running


@pytest.fixture
def settings(settings: Settings, receiver: Receiver) -> Settings:
    return dataclasses.replace(settings, webhook_allow_private=True, webhook_ca_file=str(receiver.ca_file))


def engine_sender(settings: Settings, receiver: Receiver, events: int) -> WebhookSender:
    """An operator subscribed to the receiver, ``events`` deposit.confirmed events queued."""
    app = create_engine_app(
        harness_settings(
            settings,
            {"APPLIANCE_WEBHOOK_ALLOW_PRIVATE": "1", "APPLIANCE_WEBHOOK_CA_FILE": str(receiver.ca_file)},
        )
    )
    op = make_operator(app)
    signer = Signer(app.test_client(), op["operatorId"], op["secret"])
    subscribed = signer.request("POST", "/v1/webhooks/subscriptions", {"endpointUrl": receiver.url})
    assert subscribed.status_code == 201
    with engine_database.connection_context(), write_transaction(engine_database):
        for n in range(events):
            emit(op["operatorId"], DEPOSIT_CONFIRMED, {"n": n})
    return WebhookSender(
        app.extensions["engine"].master_key, ca_file=str(receiver.ca_file), allow_private=True
    )


def order_sender(dispatch_app, receiver: Receiver, messages: int) -> OrderWebhookSender:
    """A company's endpoint on the receiver and ``messages`` order webhooks queued for it, as the
    outbox writes them (integrations/outbox.py)."""
    runtime = dispatch_app.extensions["dispatch"]
    with dispatch_database.connection_context():
        company = make_company("Shop")
        endpoint = create_webhook(runtime.master_key, True, company.id, receiver.url, list(ORDER_EVENTS))
        with write_transaction(dispatch_database):
            for n in range(messages):
                message = WebhookMessage.create(
                    message_id=f"msg_{n:024d}",
                    company=company.id,
                    event_type="order.created",
                    payload=json.dumps({"type": "order.created", "data": {"n": n}}),
                    created_at=clock.now(),
                )
                OrderDelivery.create(
                    message=message.id, endpoint=int(endpoint["id"]), next_attempt_at=clock.now()
                )
    return OrderWebhookSender(runtime.master_key, ca_file=str(receiver.ca_file), allow_private=True)


def run_sender(sender: DeliveryPool) -> int:
    """One pass, and every batch it started carried to its end; how many deliveries it started."""
    with sender.database.connection_context():
        started = sender.run_pass()
    sender.wait()
    return started


def rows(sender: DeliveryPool) -> list:
    with sender.database.connection_context():
        return list(sender.model.select().order_by(sender.model.id))


def count_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_batch_of_payout_engine_webhooks_takes_one_tls_connection_and_one_decryption(
    settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender = engine_sender(settings, receiver, 20)
    decryptions = count_calls(monkeypatch, engine_sender_module, "decrypt_secret")
    assert run_sender(sender) == 20
    assert len(receiver.received) == 20 and receiver.connections == 1
    assert len(decryptions) == 1
    assert all(row.status == "delivered" and row.attempts == 1 for row in rows(sender))


def test_a_batch_of_order_webhooks_takes_one_tls_connection_and_one_decryption(
    dispatch_app, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender = order_sender(dispatch_app, receiver, 20)
    decryptions = count_calls(monkeypatch, order_sender_module, "endpoint_secret")
    assert run_sender(sender) == 20
    assert len(receiver.received) == 20 and receiver.connections == 1
    assert len(decryptions) == 1
    assert all(row.status == "delivered" and row.attempts == 1 for row in rows(sender))
    assert sorted(r.headers["webhook-id"] for r in receiver.received) == [f"msg_{n:024d}" for n in range(20)]


def test_a_failure_mid_batch_is_one_counted_attempt_on_its_own_row_and_the_batch_goes_on(
    settings: Settings, receiver: Receiver
) -> None:
    sender = engine_sender(settings, receiver, 10)
    # A 500 on a kept connection, then a receiver that drops the connection without answering.
    receiver.answers.extend([200, 200, 500, 200, "drop"])
    assert run_sender(sender) == 10
    assert len(receiver.received) == 10 and receiver.connections == 2  # a new one after the drop
    first = rows(sender)
    assert Counter(row.status for row in first) == {"delivered": 8, "queued": 2}
    failed = [row for row in first if row.status == "queued"]
    assert "HTTP 500" in failed[0].last_error and "RemoteDisconnected" in failed[1].last_error
    assert sum(row.attempts for row in first) == len(receiver.received)  # one per attempt
    clock.advance(timedelta(hours=7))  # past the back-off
    assert run_sender(sender) == 2
    after = rows(sender)
    assert all(row.status == "delivered" for row in after)
    assert sum(row.attempts for row in after) == len(receiver.received) == 12
    sent = Counter(r.headers["x-webhook-id"] for r in receiver.received)
    assert len(sent) == 10 and sorted(sent.values()) == [1] * 8 + [2, 2]


def test_deliveries_sent_but_not_recorded_when_a_batch_dies_are_sent_again_and_recorded_once(
    dispatch_app, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender = order_sender(dispatch_app, receiver, 5)

    def dies(*args: object) -> int:
        raise RuntimeError("the process died between sending and recording")

    monkeypatch.setattr(sender, "_record", dies)
    assert run_sender(sender) == 5
    assert len(receiver.received) == 5
    assert all(row.status == "queued" and row.attempts == 0 for row in rows(sender))  # nothing recorded
    assert run_sender(sender) == 0  # still leased: nobody sends them meanwhile
    monkeypatch.undo()
    clock.advance(timedelta(seconds=61))  # the lease ends
    assert run_sender(sender) == 5
    assert all(row.status == "delivered" and row.attempts == 1 for row in rows(sender))
    # The receiver had each twice, under the same webhook-id, and deduplicates on it.
    assert Counter(Counter(r.headers["webhook-id"] for r in receiver.received).values()) == {2: 5}


def test_a_batch_out_of_time_hands_back_its_untried_rows_uncounted(
    settings: Settings, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender = engine_sender(settings, receiver, 4)
    monkeypatch.setattr(webhook_pool, "BATCH_SECONDS", -1.0)  # out of time after the first attempt
    with engine_database.connection_context():
        batch = sender.queue.claim(webhook_pool.BATCH)
        assert len(batch) == 4
        assert sender.deliver_batch(batch) == 1
    assert len(receiver.received) == 1
    handed_back = [row for row in rows(sender) if row.status == "queued"]
    assert len(handed_back) == 3
    assert all(
        row.attempts == 0 and row.lease_until is None and row.last_error is None for row in handed_back
    )
    for _ in range(3):
        run_sender(sender)  # due again at once
    assert all(row.status == "delivered" and row.attempts == 1 for row in rows(sender))
    assert len(receiver.received) == 4
