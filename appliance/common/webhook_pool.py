"""The pool that sends queued webhook deliveries, shared by the payout engine's webhooks and the
dispatch service's order webhooks: rows claimed with a lease (common/jobs.py), sent in parallel
so that one slow receiver never holds up the others.

A pass never waits for the deliveries it starts: it fills the free places of a pool of
``parallel`` threads and returns, so a delivery that ends frees its place for the next one at once
(waiting for a whole batch let one slow receiver hold every other delivery). At most
``per_endpoint`` deliveries to one endpoint are under way at once, so a slow receiver with a
backlog takes two places, never the pool. Every attempt is bounded as a whole
(webhook_transport.TIMEOUT_SECONDS), well inside the lease.

A subclass gives ``deliver(row_id)``: one attempt and its bookkeeping (delivered, retried later,
given up). The delivery model has ``status`` ("queued" while there is work), ``endpoint`` (a
foreign key), and the columns LeasedQueue needs.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import peewee

from appliance.common.jobs import LeasedQueue

log = logging.getLogger("appliance.webhooks")

PARALLEL = 8
PER_ENDPOINT = 2  # deliveries to one endpoint under way at once


class DeliveryPool:
    def __init__(
        self,
        model: type[peewee.Model],
        database: peewee.DatabaseProxy,
        *,
        name: str,
        backoff_base: float = 5.0,
        backoff_cap: float = 6 * 3600.0,
        parallel: int = PARALLEL,
        per_endpoint: int = PER_ENDPOINT,
    ) -> None:
        self.model: Any = model
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
        self._busy: Counter[int] = Counter()  # endpoint row id -> deliveries under way
        self._futures: set[Future] = set()
        self._full: list[int] = []  # endpoints with per_endpoint deliveries under way, at a claim

    def deliver(self, row_id: int) -> bool:
        raise NotImplementedError

    def _claimable(self) -> Any:
        queued = self.model.status == "queued"
        return queued & self.model.endpoint.not_in(self._full) if self._full else queued

    def in_flight(self) -> int:
        with self._lock:
            return sum(self._busy.values())

    def run_pass(self) -> int:
        """Start due deliveries in the pool's free places; returns how many were started (0: all
        places taken or nothing due, and the worker rests)."""
        started = 0
        while self.in_flight() < self.parallel:
            with self._lock:
                self._full = [endpoint for endpoint, n in self._busy.items() if n >= self.per_endpoint]
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
        row = self.model.select(self.model.endpoint).where(self.model.id == ids[0]).first()
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
        with self.database.connection_context():
            try:
                return int(self.deliver(delivery_id))
            except Exception:  # keep the pass going; the lease expires and the row is retried
                log.exception("%s delivery %s failed unexpectedly", self.model.__name__, delivery_id)
                return 0
