"""GET /events (server-sent events from the append-only event table) and GET /events/latest-cursor.

A stream replays the caller's company's events after the cursor (query ``cursor`` or the
``Last-Event-ID`` header), then polls for new ones every half second without holding a database
connection while idle, sends a heartbeat comment every 15 seconds, and ends cleanly after
``event_stream_seconds`` (the client reconnects with the last id). At most ``event_stream_max``
streams run at once; one more answers 503 so streams never starve the API's threads.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from flask import Blueprint, Response, request

from appliance.common.api import ID_MAX, endpoint
from appliance.common.problems import BadRequest, Forbidden, Unavailable
from appliance.dispatch.auth.guards import C, D, current_caller
from appliance.dispatch.db import database
from appliance.dispatch.events.schemas import Cursor, StreamQuery
from appliance.dispatch.events.store import latest_cursor
from appliance.dispatch.events.stream import stream
from appliance.dispatch.runtime import runtime

bp = Blueprint("events", __name__)
TAGS = ["Realtime"]


@endpoint(bp, "GET", "/events/latest-cursor", guard=D, response=Cursor, tags=TAGS)
def events_latest_cursor():
    """The newest event id, so a new dispatcher session starts after history."""
    return {"cursor": latest_cursor(current_caller().company_id)}


# What a courier's app hears: changes of the courier's own orders and assignments.
COURIER_KINDS = frozenset(
    {"assignment.created", "assignment.cancelled", "order.status_changed", "order.updated"}
)


def _courier_filter(courier_id: int) -> Callable[[str, str], bool]:
    mine = f'"courierId":"{courier_id}"'  # payloads are compact JSON written by record_event

    def keep(kind: str, payload: str) -> bool:
        return (
            kind in COURIER_KINDS
            and mine in payload
            and json.loads(payload).get("courierId") == str(courier_id)
        )

    return keep


def _cursor(query_cursor: int | None) -> int | None:
    header = request.headers.get("Last-Event-ID")
    if header is None:
        return query_cursor
    # ASCII digits only (str.isdigit admits "²", which int() refuses), within a database key.
    if not header.isascii() or not header.isdigit() or int(header) > ID_MAX:
        raise BadRequest("Last-Event-ID must be an event id.")
    return int(header)


def _open(company_id: int, after: int, keep: Callable[[str, str], bool] | None = None) -> Response:
    rt = runtime()
    slots = rt.event_slots
    if not slots.acquire():
        raise Unavailable("Too many event streams are open; retry shortly.", headers={"Retry-After": "5"})
    database.close()  # the stream opens a connection only for each poll
    response = Response(
        stream(company_id, after, rt.settings.event_stream_seconds, keep), mimetype="text/event-stream"
    )
    response.call_on_close(slots.release)  # runs however the stream ends, even when never started
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


@endpoint(
    bp,
    "GET",
    "/courier/events",
    guard=C,
    query=StreamQuery,
    errors=(503,),
    response_content_type="text/event-stream",
    response_description="the courier's own assignment.* and order.* events; see docs/events.md",
    tags=TAGS,
)
def courier_events(query: StreamQuery):
    """A courier's realtime events (a new assignment reaches the app at once); without a cursor
    it starts after the newest event."""
    caller = current_caller()
    courier = caller.courier()
    if courier is None:
        raise Forbidden("No courier profile in this company.")
    after = _cursor(query.cursor)
    if after is None:
        after = latest_cursor(caller.company_id)
    return _open(caller.company_id, after, _courier_filter(courier.id))


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
    after = _cursor(query.cursor)
    return _open(current_caller().company_id, 0 if after is None else after)
