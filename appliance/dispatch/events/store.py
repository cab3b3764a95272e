"""Recording realtime events, in the same transaction as the change they describe; the
company's open streams wake when that transaction commits (events/wake.py)."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.common.compiled import insert_new
from appliance.common.db import before_commit, is_sqlite
from appliance.dispatch.db import database
from appliance.dispatch.events.wake import announce
from appliance.dispatch.models import RealtimeEvent

# On PostgreSQL ids come from a sequence when a row is inserted, and two transactions may
# commit out of id order: a stream woken by the later one would read past the earlier one and
# never see it. So there a transaction's events are inserted just before it commits, under a
# lock held until the commit: ids commit in order, as on SQLite (where every writer is
# serialised anyway). The lock is the last one such a transaction takes (its row locks are all
# held by then), so it cannot close a deadlock; one key for every company.
EVENT_ORDER_LOCK = 0x6576656E7473  # "events"


def record_event(company_id: int, kind: str, payload: dict[str, Any]) -> None:
    """Record an event of the change being written, in its transaction (inserted at once on
    SQLite, just before the commit on PostgreSQL); the company's streams wake when it commits."""
    row = {
        "company": company_id,
        "kind": kind,
        "payload": json.dumps(payload, separators=(",", ":"), default=str),
        "created_at": clock.now(),
    }
    real = database.obj
    if is_sqlite(real) or not real.in_transaction():
        _insert([row])
        return
    outermost = real._state.transactions[0]  # the transaction that commits
    queued: list[dict[str, Any]] | None = getattr(outermost, "appliance_events", None)
    if queued is None:
        queued = []
        outermost.appliance_events = queued
        before_commit(real, lambda: _insert(queued))
    queued.append(row)


def _insert(rows: list[dict[str, Any]]) -> None:
    if rows and not is_sqlite(database):
        database.execute_sql("SELECT pg_advisory_xact_lock(%s)", (EVENT_ORDER_LOCK,))
    for row in rows:
        event = RealtimeEvent(**row)
        insert_new(event)  # the INSERT's text built once (an order import writes thousands)
        event_id = event.id
        announce(database, row["company"], event_id)


def latest_cursor(company_id: int) -> int:
    row = (
        RealtimeEvent.select(RealtimeEvent.id)
        .where(RealtimeEvent.company == company_id)
        .order_by(RealtimeEvent.id.desc())
        .first()
    )
    return row.id if row else 0


def events_after(company_id: int, after: int, limit: int) -> list[tuple[int, str, str, str]]:
    """(id, kind, payload JSON, createdAt) of the company's events after ``after``, oldest first;
    opens and closes its own connection, so a stream holds none while it waits."""
    with database.connection_context():
        rows = (
            RealtimeEvent.select(
                RealtimeEvent.id, RealtimeEvent.kind, RealtimeEvent.payload, RealtimeEvent.created_at
            )
            .where((RealtimeEvent.company == company_id) & (RealtimeEvent.id > after))
            .order_by(RealtimeEvent.id)
            .limit(limit)
        )
        return [(r.id, r.kind, r.payload, clock.iso(r.created_at) or "") for r in rows]
