"""The order-webhook sender: queued deliveries claimed with a lease and sent in parallel by the
pool shared with the payout engine (common/webhook_pool.py: batches to one endpoint over a kept
connection, the secret decrypted once per batch, the attempts recorded in one transaction), over the same
SSRF-guarded HTTPS (common/webhook_transport.py: public addresses only unless
``webhook_allow_private``, the system trust store plus ``webhook_ca_file``, 10 s per attempt, no
redirects).

Every attempt of a message repeats its ``webhook-id`` (a receiver deduplicates on it), with a new
``webhook-timestamp`` and ``webhook-signature`` (Standard Webhooks, signing.py). Any 2xx is
delivered; anything else is retried with exponential back-off and jitter (5 s doubling, at most
6 h apart) for three days from the change, then the delivery is ``failed``. A deleted endpoint's
queued deliveries are given up at their next turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.webhook_pool import DeliveryPool, Outgoing
from appliance.dispatch.db import database
from appliance.dispatch.integrations import signing
from appliance.dispatch.integrations.service import endpoint_secret
from appliance.dispatch.models import CompanyWebhook, WebhookDelivery, WebhookMessage

log = logging.getLogger("appliance.dispatch.webhooks")

RETRY_FOR = timedelta(days=3)


class OrderWebhookSender(DeliveryPool):
    def __init__(self, master_key: bytes, *, ca_file: str, allow_private: bool) -> None:
        super().__init__(
            WebhookDelivery,
            database,
            name="order-webhook",
            retry_for=RETRY_FOR,
            log_as=(log, "order webhook delivery"),
            ca_file=ca_file,
            allow_private=allow_private,
        )
        self.master_key = master_key

    def deliver_batch(self, row_ids: list[int]) -> int:
        deliveries = list(
            WebhookDelivery.select(WebhookDelivery, WebhookMessage)
            .join(WebhookMessage)
            .where(WebhookDelivery.id.in_(row_ids))
            .order_by(WebhookDelivery.id)
        )
        if not deliveries:
            return 0
        endpoint = CompanyWebhook.get_by_id(deliveries[0].endpoint_id)
        if endpoint.deleted_at is not None:
            with write_transaction(database):
                for delivery in deliveries:
                    self._give_up(delivery, "the endpoint was deleted")
            return 0
        secret = endpoint_secret(self.master_key, endpoint)  # once per batch
        sent = self.send(
            endpoint.id,
            endpoint.url,
            [
                Outgoing(d.id, d.message.payload.encode(), self._headers(secret, d.message))
                for d in deliveries
            ],
        )
        return self._record(endpoint, {d.id: d for d in deliveries}, sent)

    @staticmethod
    def _headers(secret: str, message: WebhookMessage) -> Callable[[], dict[str, str]]:
        body = message.payload.encode()

        def signed() -> dict[str, str]:
            timestamp = clock.unix()
            return {
                "webhook-id": message.message_id,  # the same on every attempt
                "webhook-timestamp": str(timestamp),
                "webhook-signature": signing.sign(secret, message.message_id, timestamp, body),
            }

        return signed
