"""The webhook delivery worker: queued deliveries, claimed with a lease and sent in parallel by
the pool shared with the dispatch service's order webhooks (common/webhook_pool.py: PARALLEL
places, at most PER_ENDPOINT to one endpoint, a pass never waits for the deliveries it starts),
so that one slow receiver never holds up the others or the chain watcher.

``x-webhook-id`` is the message's id: the same on every attempt of one event to one endpoint
(Standard Webhooks), so a receiver can deduplicate on it.

Retries back off exponentially with jitter (10 s doubling, at most 6 h apart) for three days from
the event; then the delivery is ``failed``. An endpoint that has failed without a single success for
three days is disabled: it leaves the active list, its queued deliveries fail, and subscribing the
same URL again re-activates it (``appliance webhook list`` shows disabled endpoints with their last
error).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.webhook_pool import DeliveryPool
from appliance.engine import protocol
from appliance.engine.auth.operators import decrypt_secret
from appliance.engine.db import database
from appliance.engine.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

log = logging.getLogger("appliance.engine.webhooks")

RETRY_FOR = timedelta(days=3)
DISABLE_AFTER = timedelta(days=3)


def message_id(event_id: str, endpoint_id: str) -> str:
    """The delivery's ``x-webhook-id``: derived from the event and the endpoint, so every attempt
    repeats it and two endpoints never share one."""
    return "dlv_" + hashlib.sha256(f"{event_id}:{endpoint_id}".encode()).hexdigest()[:24]


class WebhookSender(DeliveryPool):
    def __init__(self, master_key: bytes, *, ca_file: str, allow_private: bool) -> None:
        super().__init__(WebhookDelivery, database, name="webhook", backoff_base=5.0, backoff_cap=6 * 3600.0)
        self.master_key = master_key
        self.ca_file = ca_file
        self.allow_private = allow_private

    def deliver(self, row_id: int) -> bool:
        delivery = WebhookDelivery.get_by_id(row_id)
        endpoint = WebhookEndpoint.get_by_id(delivery.endpoint_id)
        event = WebhookEvent.get_by_id(delivery.event_id)
        if not endpoint.active:
            self._give_up(delivery, "the endpoint is disabled")
            return False
        secret = decrypt_secret(self.master_key, endpoint.operator_id, endpoint.endpoint_id, endpoint.secret)
        body = event.payload.encode()
        webhook_id = message_id(event.event_id, endpoint.endpoint_id)  # the same on every attempt
        timestamp = str(clock.unix())
        _, _, path = transport.check_url(endpoint.url)
        headers = {
            "x-webhook-id": webhook_id,
            "x-webhook-timestamp": timestamp,
            "x-webhook-signature": protocol.sign(secret, webhook_id, timestamp, path.split("?")[0], body),
            "x-webhook-event-id": event.event_id,
            "x-webhook-event-type": event.event_type,
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
                    attempts=WebhookDelivery.attempts + 1,
                    last_error=None,
                ).where(WebhookDelivery.id == row_id).execute()
                WebhookEndpoint.update(failing_since=None, last_error=None).where(
                    WebhookEndpoint.id == endpoint.id
                ).execute()
            return True
        self._failed(delivery, endpoint, error)
        return False

    def _failed(self, delivery: WebhookDelivery, endpoint: WebhookEndpoint, error: str) -> None:
        moment = clock.now()
        since = endpoint.failing_since or moment
        WebhookEndpoint.update(failing_since=since, last_error=error[:500]).where(
            WebhookEndpoint.id == endpoint.id
        ).execute()
        if moment - since >= DISABLE_AFTER:
            with write_transaction(database):
                WebhookEndpoint.update(active=False, disabled_at=moment).where(
                    WebhookEndpoint.id == endpoint.id
                ).execute()
                WebhookDelivery.update(
                    status="failed", lease_until=None, last_error="the endpoint is disabled"
                ).where(
                    (WebhookDelivery.endpoint == endpoint.id) & (WebhookDelivery.status == "queued")
                ).execute()
            log.warning("webhook endpoint %s disabled after failing since %s: %s", endpoint.url, since, error)
            return
        if moment - delivery.created_at >= RETRY_FOR:
            self._give_up(delivery, error)
            return
        self.queue.retry_later(delivery.id, error)

    def _give_up(self, delivery: WebhookDelivery, error: str) -> None:
        WebhookDelivery.update(
            status="failed", lease_until=None, attempts=WebhookDelivery.attempts + 1, last_error=error[:500]
        ).where(WebhookDelivery.id == delivery.id).execute()
        log.warning("webhook delivery %s given up: %s", delivery.id, error)
