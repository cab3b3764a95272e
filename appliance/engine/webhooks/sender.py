"""The webhook delivery worker: queued deliveries, claimed with a lease and sent in parallel by
the pool shared with the dispatch service's order webhooks (common/webhook_pool.py: PARALLEL
places, at most PER_ENDPOINT to one endpoint, batches of BATCH deliveries to one endpoint over a
kept connection, recorded in one transaction; a pass never waits for the deliveries it starts),
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
from collections.abc import Callable
from datetime import datetime, timedelta

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.webhook_pool import DeliveryPool, Outgoing, Sent
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
        super().__init__(
            WebhookDelivery,
            database,
            name="webhook",
            retry_for=RETRY_FOR,
            disable_after=DISABLE_AFTER,
            log_as=(log, "webhook delivery"),
            ca_file=ca_file,
            allow_private=allow_private,
            backoff_base=5.0,
            backoff_cap=6 * 3600.0,
        )
        self.master_key = master_key

    def deliver_batch(self, row_ids: list[int]) -> int:
        deliveries = list(
            WebhookDelivery.select(WebhookDelivery, WebhookEvent)
            .join(WebhookEvent)
            .where(WebhookDelivery.id.in_(row_ids))
            .order_by(WebhookDelivery.id)
        )
        if not deliveries:
            return 0
        endpoint = WebhookEndpoint.get_by_id(deliveries[0].endpoint_id)
        if not endpoint.active:
            with write_transaction(database):
                for delivery in deliveries:
                    self._give_up(delivery, "the endpoint is disabled")
            return 0
        # Once per batch: the secret in the clear, and the path the signature binds.
        secret = decrypt_secret(self.master_key, endpoint.operator_id, endpoint.endpoint_id, endpoint.secret)
        try:
            _, _, path = transport.check_url(endpoint.url)
        except transport.Refused as exc:
            sent = Sent([(d.id, f"Refused: {exc}") for d in deliveries], [])
        else:
            sent = self.send(
                endpoint.id,
                endpoint.url,
                [
                    Outgoing(d.id, d.event.payload.encode(), self._headers(secret, path, endpoint, d))
                    for d in deliveries
                ],
            )
        return self._record(endpoint, {d.id: d for d in deliveries}, sent)

    @staticmethod
    def _headers(
        secret: str, path: str, endpoint: WebhookEndpoint, delivery: WebhookDelivery
    ) -> Callable[[], dict[str, str]]:
        event = delivery.event
        body = event.payload.encode()
        webhook_id = message_id(event.event_id, endpoint.endpoint_id)  # the same on every attempt

        def signed() -> dict[str, str]:
            timestamp = str(clock.unix())
            return {
                "x-webhook-id": webhook_id,
                "x-webhook-timestamp": timestamp,
                "x-webhook-signature": protocol.sign(secret, webhook_id, timestamp, path.split("?")[0], body),
                "x-webhook-event-id": event.event_id,
                "x-webhook-event-type": event.event_type,
            }

        return signed

    def disable_endpoint(self, endpoint: WebhookEndpoint, moment: datetime) -> None:
        """Out of the active list; its queued deliveries fail (subscribing the URL again
        re-activates it)."""
        WebhookEndpoint.update(active=False, disabled_at=moment).where(
            WebhookEndpoint.id == endpoint.id
        ).execute()
        WebhookDelivery.update(
            status="failed",
            lease_until=None,
            lease_holder=None,
            last_error="the endpoint is disabled",
        ).where((WebhookDelivery.endpoint == endpoint.id) & (WebhookDelivery.status == "queued")).execute()
