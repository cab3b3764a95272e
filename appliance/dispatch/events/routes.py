"""GET /events (server-sent events from the append-only event table) and GET /events/latest-cursor.

A stream replays the caller's company's events after the cursor (query ``cursor`` or the
``Last-Event-ID`` header), then polls for new ones every half second without holding a database
connection while idle, sends a heartbeat comment every 15 seconds, and ends cleanly after
``event_stream_seconds`` (the client reconnects with the last id). At most ``event_stream_max``
streams run at once; one more answers 503 so streams never starve the API's threads.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Annotated

from flask import Blueprint, Flask, Response, request
from pydantic import BaseModel, Field

from appliance.common import clock, lifecycle
from appliance.common.api import QuerySchema, endpoint
from appliance.common.problems import BadRequest, Unavailable
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.db import database
from appliance.dispatch.events.store import latest_cursor
from appliance.dispatch.models import RealtimeEvent
from appliance.dispatch.runtime import runtime

bp = Blueprint("events", __name__)
TAGS = ["Realtime"]
POLL_SECONDS = 0.5
HEARTBEAT_SECONDS = 15.0
BATCH = 500


class StreamSlots:
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


def init_app(app: Flask) -> None:
    rt = app.extensions["dispatch"]
    rt.engines["event_slots"] = StreamSlots(rt.settings.event_stream_max)


class Cursor(BaseModel):
    cursor: int


class StreamQuery(QuerySchema):
    cursor: Annotated[int, Field(ge=0)] | None = None


@endpoint(bp, "GET", "/events/latest-cursor", guard=D, response=Cursor, tags=TAGS)
def events_latest_cursor():
    """The newest event id, so a new dispatcher session starts after history."""
    return {"cursor": latest_cursor(current_caller().company_id)}


def _fetch(company_id: int, after: int) -> list[tuple[int, str, str, str]]:
    with database.connection_context():
        rows = (
            RealtimeEvent.select(
                RealtimeEvent.id, RealtimeEvent.kind, RealtimeEvent.payload, RealtimeEvent.created_at
            )
            .where((RealtimeEvent.company == company_id) & (RealtimeEvent.id > after))
            .order_by(RealtimeEvent.id)
            .limit(BATCH)
        )
        return [(r.id, r.kind, r.payload, clock.iso(r.created_at) or "") for r in rows]


def _frame(event_id: int, kind: str, payload: str, created_at: str) -> str:
    data = json.dumps(
        {"id": event_id, "kind": kind, "createdAt": created_at, "payload": json.loads(payload)},
        separators=(",", ":"),
    )
    return f"id: {event_id}\nevent: {kind}\ndata: {data}\n\n"


def stream(company_id: int, after: int, lifetime: float) -> Iterator[str]:
    yield f"retry: 1000\n: stream open, cursor {after}\n\n"
    ends = time.monotonic() + lifetime
    next_beat = time.monotonic() + HEARTBEAT_SECONDS
    while time.monotonic() < ends and not lifecycle.stopping.is_set():
        rows = _fetch(company_id, after)
        for event_id, kind, payload, created_at in rows:
            after = event_id
            yield _frame(event_id, kind, payload, created_at)
        if len(rows) == BATCH:
            continue
        if time.monotonic() >= next_beat:
            next_beat = time.monotonic() + HEARTBEAT_SECONDS
            yield ": heartbeat\n\n"
        lifecycle.stopping.wait(POLL_SECONDS)
    yield ": stream ends, reconnect with Last-Event-ID\n\n"


@endpoint(
    bp,
    "GET",
    "/events",
    guard=D,
    query=StreamQuery,
    errors=(503,),
    response_content_type="text/event-stream",
    response_description="server-sent events; see docs/events.md for every kind and payload",
    tags=TAGS,
)
def events(query: StreamQuery):
    """Realtime events of the caller's company, with catch-up from the cursor."""
    after = query.cursor
    header = request.headers.get("Last-Event-ID")
    if header is not None:
        if not header.isdigit():
            raise BadRequest("Last-Event-ID must be an event id.")
        after = int(header)
    rt = runtime()
    slots: StreamSlots = rt.engines["event_slots"]
    if not slots.acquire():
        raise Unavailable("Too many event streams are open; retry shortly.", headers={"Retry-After": "5"})
    company_id = current_caller().company_id
    if after is None:
        after = 0
    database.close()  # the stream opens a connection only for each poll
    response = Response(
        stream(company_id, after, rt.settings.event_stream_seconds), mimetype="text/event-stream"
    )
    response.call_on_close(slots.release)  # runs however the stream ends, even when never started
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response
