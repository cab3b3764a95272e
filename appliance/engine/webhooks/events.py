"""Events for operators, written in the same transaction as the change they announce (an outbox):
nothing is announced that did not happen, and nothing that happened is lost. Each event has a
stable ``event_id`` (``evt_`` + 24 hex digits) that every delivery attempt repeats."""

from __future__ import annotations

import json
import secrets
from typing import Any

from appliance.common import clock
from appliance.engine.models import WebhookEvent

# deposit.confirmed is the spec's; the others are ours (docs/webhooks.md).
DEPOSIT_CONFIRMED = "deposit.confirmed"
DEPOSIT_RETRACTED = "deposit.retracted"  # a confirmed deposit's block left the canonical chain
EVENT_TYPES = (DEPOSIT_CONFIRMED, DEPOSIT_RETRACTED)


def new_event_id() -> str:
    return "evt_" + secrets.token_hex(12)


def emit(operator_id: str, event_type: str, data: dict[str, Any]) -> str:
    """Record an event (call inside the write transaction of the change)."""
    event_id = new_event_id()
    moment = clock.now()
    body = {"eventId": event_id, "type": event_type, "createdAt": clock.iso(moment), "data": data}
    WebhookEvent.create(
        event_id=event_id,
        operator=operator_id,
        event_type=event_type,
        payload=json.dumps(body, separators=(",", ":"), sort_keys=True),
        created_at=moment,
    )
    return event_id
