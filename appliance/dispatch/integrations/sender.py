"""The order-webhook sender: queued deliveries claimed with a lease and sent in parallel by the
pool shared with the payout engine (common/webhook_pool.py), over the same SSRF-guarded HTTPS
(common/webhook_transport.py: public addresses only unless ``webhook_allow_private``, the system
trust store plus ``webhook_ca_file``, 10 s per attempt, no redirects).

Every attempt of a message repeats its ``webhook-id`` (a receiver deduplicates on it), with a new
``webhook-timestamp`` and ``webhook-signature`` (Standard Webhooks, signing.py). Any 2xx is
delivered; anything else is retried with exponential back-off and jitter (5 s doubling, at most
6 h apart) for three days from the change, then the delivery is ``failed``. A deleted endpoint's
queued deliveries are given up at their next turn.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.webhook_pool import DeliveryPool
from appliance.dispatch.db import database
from appliance.dispatch.integrations import signing
from appliance.dispatch.integrations.service import endpoint_secret
from appliance.dispatch.models import CompanyWebhook, WebhookDelivery, WebhookMessage

log = logging.getLogger("appliance.dispatch.webhooks")

RETRY_FOR = timedelta(days=3)


class OrderWebhookSender(DeliveryPool):
    def __init__(self, master_key: bytes, *, ca_file: str, allow_private: bool) -> None:
        super().__init__(WebhookDelivery, database, name="order-webhook")
        self.master_key = master_key
        self.ca_file = ca_file
        self.allow_private = allow_private

    def deliver(self, row_id: int) -> bool:
        delivery = WebhookDelivery.get_by_id(row_id)
        endpoint = CompanyWebhook.get_by_id(delivery.endpoint_id)
        message = WebhookMessage.get_by_id(delivery.message_id)
        if endpoint.deleted_at is not None:
            self._give_up(delivery, "the endpoint was deleted")
            return False
        secret = endpoint_secret(self.master_key, endpoint)
        body = message.payload.encode()
        timestamp = clock.unix()
        headers = {
            "webhook-id": message.message_id,  # the same on every attempt
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signing.sign(secret, message.message_id, timestamp, body),
        }
        error = transport.attempt(
            endpoint.url, body, headers, ca_file=self.ca_file, allow_private=self.allow_private
        )
        if error is None:
            with write_transaction(database):
                WebhookDelivery.update(
                    status="delivered",
                    delivered_at=clock.now(),
                    lease_until=None,
                    lease_holder=None,
                    attempts=WebhookDelivery.attempts + 1,
                    last_error=None,
                ).where(WebhookDelivery.id == row_id).execute()
                CompanyWebhook.update(failing_since=None, last_error=None).where(
                    CompanyWebhook.id == endpoint.id
                ).execute()
            return True
        with write_transaction(database):
            CompanyWebhook.update(
                failing_since=endpoint.failing_since or clock.now(), last_error=error[:500]
            ).where(CompanyWebhook.id == endpoint.id).execute()
        if clock.now() - delivery.created_at >= RETRY_FOR:
            self._give_up(delivery, error)
        else:
            self.queue.retry_later(delivery.id, error)
        return False

    def _give_up(self, delivery: WebhookDelivery, error: str) -> None:
        with write_transaction(database):
            WebhookDelivery.update(
                status="failed",
                lease_until=None,
                lease_holder=None,
                attempts=WebhookDelivery.attempts + 1,
                last_error=error[:500],
            ).where(WebhookDelivery.id == delivery.id).execute()
        log.warning("order webhook delivery %s given up: %s", delivery.id, error)
