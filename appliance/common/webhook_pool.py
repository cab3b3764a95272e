"""The pool that sends queued webhook deliveries, shared by the payout engine's webhooks and the
dispatch service's order webhooks: rows claimed with a lease (common/jobs.py) in batches, sent in
parallel so that one slow receiver never holds up the others.

A pass never waits for the deliveries it starts: it fills the free places of a pool of
``parallel`` threads and returns, so a batch that ends frees its place for the next one at once
(waiting for a whole pass let one slow receiver hold every other delivery). A place sends one
batch: up to ``BATCH`` due deliveries to one endpoint, one after another over a kept HTTPS
connection (webhook_transport.KeptConnections, one set per endpoint: one TLS handshake for the
batch, not one per delivery), with the endpoint's secret decrypted once, and every attempt's
outcome written in one transaction at the end (still one delivery row per attempt: each attempt
updates its own row once). At most ``per_endpoint`` batches to one endpoint are under way at once,
so a slow receiver with a backlog takes two places, never the pool. Every attempt is bounded as a
whole (webhook_transport.TIMEOUT_SECONDS) and a batch starts no attempt after ``BATCH_SECONDS``
(the rest are handed back untried, not counted), well inside the 60 s lease; a crash mid-batch
leaves the rows leased, and they are claimed again when the lease ends (the same ``webhook-id``, so
a receiver deduplicates what it already had).

A subclass gives ``deliver_batch(row_ids)``: load the rows, ``send`` them, and ``_record`` the
outcome: each attempt (delivered, retried later, given up after ``retry_for`` from the delivery's
creation) and the endpoint's health (``failing_since``, ``last_error``) as the attempts left it,
with the untried rows handed back, in one transaction. With ``disable_after``, an endpoint failing
that long without a success is disabled (the subclass's ``disable_endpoint``). The delivery model
has ``status`` ("queued" while there is work), ``endpoint`` (a foreign key), ``created_at``,
``delivered_at``, ``attempts``, ``last_error`` and the columns LeasedQueue needs.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.jobs import LeasedQueue

log = logging.getLogger("appliance.webhooks")

PARALLEL = 8
PER_ENDPOINT = 2  # batches to one endpoint under way at once
BATCH = 32  # deliveries claimed at once; sent to one endpoint as one batch
BATCH_SECONDS = 20.0  # a batch starts no attempt after this (each may take TIMEOUT_SECONDS more)
FREED_WAIT_SECONDS = 0.5  # a pass that found every place taken waits this long for one to free


@dataclass
class Outgoing:
    """One delivery to send: its row, its body, and its headers, signed when it is sent (the
    timestamp is the attempt's)."""

    row_id: int
    body: bytes
    headers: Callable[[], dict[str, str]]


@dataclass
class Sent:
    """What a batch did: (row id, None or why the attempt failed) in the order the attempts were
    made, and the rows left untried (the batch ran out of time)."""

    attempts: list[tuple[int, str | None]]
    untried: list[int]


class DeliveryPool:
    def __init__(
        self,
        model: type[peewee.Model],
        database: peewee.DatabaseProxy,
        *,
        name: str,
        retry_for: timedelta,
        disable_after: timedelta | None = None,
        log_as: tuple[logging.Logger, str] = (log, "webhook delivery"),
        backoff_base: float = 5.0,
        backoff_cap: float = 6 * 3600.0,
        ca_file: str,
        allow_private: bool,
        parallel: int = PARALLEL,
        per_endpoint: int = PER_ENDPOINT,
    ) -> None:
        self.model: Any = model
        self.retry_for = retry_for
        self.disable_after = disable_after
        self.log, self.kind = log_as  # the service's logger, and what its deliveries are called
        self.ca_file = ca_file
        self.allow_private = allow_private
        self.connections = transport.KeptConnections(ca_file=ca_file, allow_private=allow_private)
        self.database = database
        self.parallel = parallel
        self.per_endpoint = per_endpoint
        self.queue = LeasedQueue(
            model,
            database,
            pending=self._claimable,
            lease=timedelta(seconds=60),
            error_field="last_error",
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
        )
        self.pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix=name)
        self._lock = threading.Lock()
        self._busy: Counter[int] = Counter()  # endpoint row id -> batches under way
        self._futures: set[Future] = set()
        self._full: list[int] = []  # endpoints with per_endpoint batches under way, at a claim
        self._freed = threading.Event()  # a batch ended: its place is free

    def deliver_batch(self, row_ids: list[int]) -> int:
        """Send these leased deliveries (all to one endpoint) and record them; returns how many
        were delivered."""
        raise NotImplementedError

    def disable_endpoint(self, endpoint: Any, moment: datetime) -> None:
        """Take ``endpoint`` out of service and fail its queued deliveries (in ``_record``'s
        transaction); needed with ``disable_after``."""
        raise NotImplementedError

    def _record(self, endpoint: Any, deliveries: dict[int, Any], sent: Sent) -> int:
        """Every attempt of the batch on its own row, the endpoint's health as the attempts left it
        (in the order they were made), and the untried rows handed back: one transaction. Returns
        how many were delivered."""
        m = self.model
        moment = clock.now()
        since: datetime | None = endpoint.failing_since
        last_error: str | None = endpoint.last_error
        delivered = [row_id for row_id, error in sent.attempts if error is None]
        disabled = False
        with write_transaction(self.database):
            if delivered:
                m.update(
                    status="delivered",
                    delivered_at=moment,
                    lease_until=None,
                    lease_holder=None,
                    attempts=m.attempts + 1,
                    last_error=None,
                ).where(m.id.in_(delivered)).execute()
            for row_id, error in sent.attempts:
                if error is None:
                    since, last_error = None, None
                    continue
                since, last_error = since or moment, error[:500]
                delivery = deliveries[row_id]
                if disabled:
                    self._give_up(delivery, "the endpoint is disabled")
                elif self.disable_after is not None and moment - since >= self.disable_after:
                    self._give_up(delivery, error)
                    disabled = True
                elif moment - delivery.created_at >= self.retry_for:
                    self._give_up(delivery, error)
                else:
                    self.queue.retry_later(row_id, error)
            if sent.untried:
                m.update(lease_until=None, lease_holder=None).where(m.id.in_(sent.untried)).execute()
            endpoints = type(endpoint)
            if sent.attempts:
                endpoints.update(failing_since=since, last_error=last_error).where(
                    endpoints.id == endpoint.id
                ).execute()
            if disabled:
                self.disable_endpoint(endpoint, moment)
        if disabled:
            self.log.warning(
                "webhook endpoint %s disabled after failing since %s: %s", endpoint.url, since, last_error
            )
        return len(delivered)

    def _give_up(self, delivery: Any, error: str) -> None:
        m = self.model
        m.update(
            status="failed",
            lease_until=None,
            lease_holder=None,
            attempts=m.attempts + 1,
            last_error=error[:500],
        ).where(m.id == delivery.id).execute()
        self.log.warning("%s %s given up: %s", self.kind, delivery.id, error)

    def send(self, endpoint_id: int, url: str, outgoing: Sequence[Outgoing]) -> Sent:
        """Each delivery once, in order, over the endpoint's kept connections, until the batch's
        time is up."""
        started = time.monotonic()
        attempts: list[tuple[int, str | None]] = []
        for n, item in enumerate(outgoing):
            if n and time.monotonic() - started > BATCH_SECONDS:
                return Sent(attempts, [rest.row_id for rest in outgoing[n:]])
            attempts.append(
                (item.row_id, self.connections.attempt(endpoint_id, url, item.body, item.headers()))
            )
        return Sent(attempts, [])

    def _claimable(self) -> Any:
        queued = self.model.status == "queued"
        return queued & self.model.endpoint.not_in(self._full) if self._full else queued

    def in_flight(self) -> int:
        with self._lock:
            return sum(self._busy.values())

    def run_pass(self) -> int:
        """Start batches of due deliveries in the pool's free places; returns how many deliveries
        were started (0: nothing due, and the worker rests). When every place is taken, or due
        rows wait for an endpoint at its limit, the pass waits (at most ``FREED_WAIT_SECONDS``)
        for a batch to end and fills its place at once: the worker's idle pause would leave the
        places of a backlog empty most of the time."""
        self._freed.clear()
        started, blocked = self._fill()
        if started or not blocked:
            return started
        self._freed.wait(FREED_WAIT_SECONDS)
        return self._fill()[0]

    def _fill(self) -> tuple[int, bool]:
        """(deliveries started, whether places or endpoint limits stopped the filling)."""
        started = 0
        while self.in_flight() < self.parallel:
            with self._lock:
                self._full = [endpoint for endpoint, n in self._busy.items() if n >= self.per_endpoint]
                limited = bool(self._full)
            batches = self._claim()
            if not batches:
                return started, limited
            for endpoint_id, row_ids in batches:
                with self._lock:
                    self._busy[endpoint_id] += 1
                    future = self.pool.submit(self._deliver_in_connection, row_ids)
                    self._futures.add(future)
                future.add_done_callback(functools.partial(self._done, endpoint_id=endpoint_id))
                started += len(row_ids)
        return started, True

    def _claim(self) -> list[tuple[int, list[int]]]:
        """Lease the oldest due deliveries to endpoints that have a place left, as one batch per
        endpoint: [(endpoint, row ids)]. Batches beyond the free places are handed back at once."""
        ids = self.queue.claim(BATCH)
        if not ids:
            return []
        m = self.model
        by_endpoint: dict[int, list[int]] = {}
        for row in m.select(m.id, m.endpoint).where(m.id.in_(ids)).order_by(m.id):
            by_endpoint.setdefault(row.endpoint_id, []).append(row.id)
        batches = list(by_endpoint.items())
        free = self.parallel - self.in_flight()
        if len(batches) > free:
            extra = [row_id for _, row_ids in batches[free:] for row_id in row_ids]
            m.update(lease_until=None, lease_holder=None).where(m.id.in_(extra)).execute()
            batches = batches[:free]
        return batches

    def _done(self, future: Future, endpoint_id: int) -> None:
        with self._lock:
            self._futures.discard(future)
            self._busy[endpoint_id] -= 1
            if self._busy[endpoint_id] <= 0:
                del self._busy[endpoint_id]
        self._freed.set()

    def wait(self) -> None:
        """Until every delivery started has ended (for tests and an orderly stop)."""
        while True:
            with self._lock:
                pending: list[Future] = list(self._futures)
            if not pending:
                return
            for future in pending:
                future.result()

    def _deliver_in_connection(self, row_ids: list[int]) -> int:
        with self.database.connection_context():
            try:
                return self.deliver_batch(row_ids)
            except Exception:  # keep the pass going; the leases expire and the rows are retried
                log.exception("%s deliveries %s failed unexpectedly", self.model.__name__, row_ids)
                return 0
