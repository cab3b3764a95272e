"""The webhook delivery worker: queued deliveries, claimed with a lease (common/jobs.py), sent in
parallel so that one slow receiver never holds up the others or the chain watcher.

Retries back off exponentially with jitter (10 s doubling, at most 6 h apart) for three days from
the event; then the delivery is ``failed``. An endpoint that has failed without a single success for
three days is disabled: it leaves the active list, its queued deliveries fail, and subscribing the
same URL again re-activates it (``appliance webhook list`` shows disabled endpoints with their last
error).
"""

from __future__ import annotations

import logging
import secrets
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.jobs import LeasedQueue
from appliance.engine import protocol
from appliance.engine.auth.operators import decrypt_secret
from appliance.engine.db import database
from appliance.engine.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from appliance.engine.webhooks import transport

log = logging.getLogger("appliance.engine.webhooks")

RETRY_FOR = timedelta(days=3)
DISABLE_AFTER = timedelta(days=3)
PARALLEL = 8


class WebhookSender:
    def __init__(self, master_key: bytes, *, ca_file: str, allow_private: bool) -> None:
        self.master_key = master_key
        self.ca_file = ca_file
        self.allow_private = allow_private
        self.queue = LeasedQueue(
            WebhookDelivery,
            database,
            pending=lambda: WebhookDelivery.status == "queued",
            lease=timedelta(seconds=60),
            error_field="last_error",
            backoff_base=5.0,
            backoff_cap=6 * 3600.0,
        )
        self.pool = ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="webhook")

    def run_pass(self) -> int:
        ids = self.queue.claim(4 * PARALLEL)
        return sum(self.pool.map(self._deliver_in_connection, ids))

    def _deliver_in_connection(self, delivery_id: int) -> int:
        with database.connection_context():
            try:
                return int(self.deliver(delivery_id))
            except Exception:  # keep the pass going; the lease expires and the row is retried
                log.exception("webhook delivery %s failed unexpectedly", delivery_id)
                return 0

    def deliver(self, row_id: int) -> bool:
        delivery = WebhookDelivery.get_by_id(row_id)
        endpoint = WebhookEndpoint.get_by_id(delivery.endpoint_id)
        event = WebhookEvent.get_by_id(delivery.event_id)
        if not endpoint.active:
            self._give_up(delivery, "the endpoint is disabled")
            return False
        secret = decrypt_secret(self.master_key, endpoint.operator_id, endpoint.endpoint_id, endpoint.secret)
        body = event.payload.encode()
        attempt_id = "dlv_" + secrets.token_hex(12)  # fresh per attempt; the event id stays
        timestamp = str(clock.unix())
        _, _, path = transport.check_url(endpoint.url)
        headers = {
            "x-webhook-id": attempt_id,
            "x-webhook-timestamp": timestamp,
            "x-webhook-signature": protocol.sign(secret, attempt_id, timestamp, path.split("?")[0], body),
            "x-webhook-event-id": event.event_id,
            "x-webhook-event-type": event.event_type,
        }
        try:
            status, answer = transport.post(
                endpoint.url, body, headers, ca_file=self.ca_file, allow_private=self.allow_private
            )
            error = None if 200 <= status < 300 else f"HTTP {status}: {answer[:200]}"
        except (transport.Refused, OSError) as exc:  # ssl errors and timeouts are OSErrors
            error = f"{type(exc).__name__}: {exc}"
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
