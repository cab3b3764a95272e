"""The server-sent event stream: replay after a cursor, then wait for the company's next event
(woken when it commits: events/wake.py; a poll every POLL_SECONDS is the fallback), with
heartbeats, for a bounded lifetime; and the limit on how many streams run at once (so streams
never starve the API's threads)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

from appliance.common import lifecycle
from appliance.dispatch.db import database
from appliance.dispatch.events.store import events_after
from appliance.dispatch.events.wake import database_key, wakes

# The fallback when no wake comes: events written by another process on SQLite, or while the
# PostgreSQL listener reconnects. Also how soon a stream notices the server stopping.
POLL_SECONDS = 0.5
HEARTBEAT_SECONDS = 15.0
BATCH = 500


class StreamSlots:
    """At most ``limit`` streams at once, counted in this process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self.lock = threading.Lock()

    def acquire(self) -> bool:
        with self.lock:
            if self.active >= self.limit:
                return False
            self.active += 1
            return True

    def release(self) -> None:
        with self.lock:
            self.active -= 1


def frame(event_id: int, kind: str, payload: str, created_at: str) -> str:
    data = json.dumps(
        {"id": event_id, "kind": kind, "createdAt": created_at, "payload": json.loads(payload)},
        separators=(",", ":"),
    )
    return f"id: {event_id}\nevent: {kind}\ndata: {data}\n\n"


def stream(
    company_id: int, after: int, lifetime: float, keep: Callable[[str, str], bool] | None = None
) -> Iterator[str]:
    """The company's events after ``after``; with ``keep(kind, payload)`` only those it keeps (a
    courier's own), the others passed over with a bare ``id:`` line so a reconnect resumes after
    them."""
    yield f"retry: 1000\n: stream open, cursor {after}\n\n"
    ends = time.monotonic() + lifetime
    next_beat = time.monotonic() + HEARTBEAT_SECONDS
    key = (database_key(database), company_id)
    with wakes.hearing(database):
        while time.monotonic() < ends and not lifecycle.stopping.is_set():
            seen = wakes.latest(key)  # before reading: an event committed after this wakes the wait
            rows = events_after(company_id, after, BATCH)
            passed = False
            for event_id, kind, payload, created_at in rows:
                after = event_id
                if keep is not None and not keep(kind, payload):
                    passed = True
                    continue
                passed = False
                yield frame(event_id, kind, payload, created_at)
            if passed:
                yield f"id: {after}\n\n"
            if len(rows) == BATCH:
                continue
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + HEARTBEAT_SECONDS
                yield ": heartbeat\n\n"
            now = time.monotonic()
            wakes.wait(key, seen, max(0.0, min(POLL_SECONDS, ends - now, next_beat - now)))
    yield ": stream ends, reconnect with Last-Event-ID\n\n"
