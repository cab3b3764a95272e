"""Events for operators, written in the same transaction as the change they announce (an outbox):
nothing is announced that did not happen, and nothing that happened is lost. Each event has a
stable ``eventId`` (``evt_`` + 24 hex digits) that every delivery attempt repeats; one delivery row
per subscribed, active endpoint is queued with it."""

from __future__ import annotations

import json
import secrets
from typing import Any

from appliance.common import clock
from appliance.engine.models import WebhookDelivery, WebhookEndpoint, WebhookEvent, WebhookSubscription

# deposit.confirmed is the spec's; the others are ours (docs/webhooks.md).
DEPOSIT_CONFIRMED = "deposit.confirmed"
DEPOSIT_RETRACTED = "deposit.retracted"  # a confirmed deposit's block left the canonical chain
PAYOUT_COMPLETED = "payout.completed"
PAYOUT_FAILED = "payout.failed"
EVENT_TYPES = (DEPOSIT_CONFIRMED, DEPOSIT_RETRACTED, PAYOUT_COMPLETED, PAYOUT_FAILED)


def emit(operator_id: str, event_type: str, data: dict[str, Any]) -> str:
    """Record an event and queue its deliveries (call inside the write transaction of the change)."""
    event_id = "evt_" + secrets.token_hex(12)
    moment = clock.now()
    body = {"eventId": event_id, "type": event_type, "createdAt": clock.iso(moment), "data": data}
    event = WebhookEvent.create(
        event_id=event_id,
        operator=operator_id,
        event_type=event_type,
        payload=json.dumps(body, separators=(",", ":"), sort_keys=True),
        created_at=moment,
    )
    endpoints = (
        WebhookEndpoint.select(WebhookEndpoint.id)
        .join(WebhookSubscription)
        .where(
            (WebhookEndpoint.operator == operator_id)
            & WebhookEndpoint.active
            & (WebhookSubscription.event_type == event_type)
        )
    )
    for endpoint in endpoints:
        WebhookDelivery.create(
            event=event.id, endpoint=endpoint.id, next_attempt_at=moment, created_at=moment
        )
    return event_id
