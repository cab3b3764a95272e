"""Recording realtime events, in the same transaction as the change they describe; the
company's open streams wake when that transaction commits (events/wake.py)."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.dispatch.db import database
from appliance.dispatch.events.wake import announce
from appliance.dispatch.models import RealtimeEvent


def record_event(company_id: int, kind: str, payload: dict[str, Any]) -> int:
    row = RealtimeEvent.create(
        company=company_id,
        kind=kind,
        payload=json.dumps(payload, separators=(",", ":"), default=str),
        created_at=clock.now(),
    )
    announce(database, company_id, row.id)
    return row.id


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
