"""GET /events (server-sent events from the append-only event table) and GET /events/latest-cursor.

A stream replays the caller's company's events after the cursor (query ``cursor`` or the
``Last-Event-ID`` header), then polls for new ones every half second without holding a database
connection while idle, sends a heartbeat comment every 15 seconds, and ends cleanly after
``event_stream_seconds`` (the client reconnects with the last id). At most ``event_stream_max``
streams run at once; one more answers 503 so streams never starve the API's threads.
"""

from __future__ import annotations

from flask import Blueprint, Response, request

from appliance.common.api import ID_MAX, endpoint
from appliance.common.problems import BadRequest, Unavailable
from appliance.dispatch.auth.guards import D, current_caller
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
        # ASCII digits only (str.isdigit admits "²", which int() refuses), within a database key.
        if not header.isascii() or not header.isdigit() or int(header) > ID_MAX:
            raise BadRequest("Last-Event-ID must be an event id.")
        after = int(header)
    rt = runtime()
    slots = rt.event_slots
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
