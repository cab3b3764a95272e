"""The webhook delivery worker: queued deliveries, claimed with a lease (common/jobs.py), sent in
parallel so that one slow receiver never holds up the others or the chain watcher.

A pass never waits for the deliveries it starts: it fills the free places of a pool of PARALLEL
threads and returns, so a delivery that ends frees its place for the next one at once (waiting for
a whole batch let one slow receiver hold every other delivery). At most PER_ENDPOINT deliveries to
one endpoint are under way at once, so a slow receiver with a backlog takes two places, never the
pool. Every attempt is bounded as a whole (transport.TIMEOUT_SECONDS), well inside the lease.

``x-webhook-id`` is the message's id: the same on every attempt of one event to one endpoint
(Standard Webhooks), so a receiver can deduplicate on it.

Retries back off exponentially with jitter (10 s doubling, at most 6 h apart) for three days from
the event; then the delivery is ``failed``. An endpoint that has failed without a single success for
three days is disabled: it leaves the active list, its queued deliveries fail, and subscribing the
same URL again re-activates it (``appliance webhook list`` shows disabled endpoints with their last
error).
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import logging
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import Any

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
PER_ENDPOINT = 2  # deliveries to one endpoint under way at once


def message_id(event_id: str, endpoint_id: str) -> str:
    """The delivery's ``x-webhook-id``: derived from the event and the endpoint, so every attempt
    repeats it and two endpoints never share one."""
    return "dlv_" + hashlib.sha256(f"{event_id}:{endpoint_id}".encode()).hexdigest()[:24]


class WebhookSender:
    def __init__(self, master_key: bytes, *, ca_file: str, allow_private: bool) -> None:
        self.master_key = master_key
        self.ca_file = ca_file
        self.allow_private = allow_private
        self.queue = LeasedQueue(
            WebhookDelivery,
            database,
            pending=self._claimable,
            lease=timedelta(seconds=60),
            error_field="last_error",
            backoff_base=5.0,
            backoff_cap=6 * 3600.0,
        )
        self.pool = ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="webhook")
        self._lock = threading.Lock()
        self._busy: Counter[int] = Counter()  # endpoint row id -> deliveries under way
        self._futures: set[Future] = set()
        self._full: list[int] = []  # endpoints with PER_ENDPOINT deliveries under way, at a claim

    def _claimable(self) -> Any:
        queued = WebhookDelivery.status == "queued"
        return queued & WebhookDelivery.endpoint.not_in(self._full) if self._full else queued

    def in_flight(self) -> int:
        with self._lock:
            return sum(self._busy.values())

    def run_pass(self) -> int:
        """Start due deliveries in the pool's free places; returns how many were started (0: all
        places taken or nothing due, and the worker rests half a second)."""
        started = 0
        while self.in_flight() < PARALLEL:
            with self._lock:
                self._full = [endpoint for endpoint, n in self._busy.items() if n >= PER_ENDPOINT]
            claimed = self._claim()
            if claimed is None:
                break
            row_id, endpoint_id = claimed
            with self._lock:
                self._busy[endpoint_id] += 1
                future = self.pool.submit(self._deliver_in_connection, row_id)
                self._futures.add(future)
            future.add_done_callback(functools.partial(self._done, endpoint_id=endpoint_id))
            started += 1
        return started

    def _claim(self) -> tuple[int, int] | None:
        """Lease the oldest due delivery to an endpoint that has a place left: (row id, endpoint)."""
        ids = self.queue.claim(1)
        if not ids:
            return None
        row = WebhookDelivery.select(WebhookDelivery.endpoint).where(WebhookDelivery.id == ids[0]).first()
        return ids[0], row.endpoint_id

    def _done(self, future: Future, endpoint_id: int) -> None:
        with self._lock:
            self._futures.discard(future)
            self._busy[endpoint_id] -= 1
            if self._busy[endpoint_id] <= 0:
                del self._busy[endpoint_id]

    def wait(self) -> None:
        """Until every delivery started has ended (for tests and an orderly stop)."""
        while True:
            with self._lock:
                pending: list[Future] = list(self._futures)
            if not pending:
                return
            for future in pending:
                future.result()

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
        try:
            status, answer = transport.post(
                endpoint.url, body, headers, ca_file=self.ca_file, allow_private=self.allow_private
            )
            error = None if 200 <= status < 300 else f"HTTP {status}: {answer[:200]}"
        # ssl errors and timeouts are OSErrors; a receiver answering something that is not HTTP
        # is an http.client error: all are a failed attempt, counted and backed off.
        except (transport.Refused, OSError, http.client.HTTPException) as exc:
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
