"""Recording realtime events, in the same transaction as the change they describe."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.dispatch.models import RealtimeEvent


def record_event(company_id: int, kind: str, payload: dict[str, Any]) -> int:
    row = RealtimeEvent.create(
        company=company_id,
        kind=kind,
        payload=json.dumps(payload, separators=(",", ":"), default=str),
        created_at=clock.now(),
    )
    return row.id


def latest_cursor(company_id: int) -> int:
    row = (
        RealtimeEvent.select(RealtimeEvent.id)
        .where(RealtimeEvent.company == company_id)
        .order_by(RealtimeEvent.id.desc())
        .first()
    )
    return row.id if row else 0
