"""Order webhooks, written in the same transaction as the order change they announce (an
outbox): nothing is announced that did not happen, and nothing that happened is lost. One message
per change (its ``message_id`` is every attempt's ``webhook-id``) and one delivery per endpoint of
the company subscribed to its type; nothing is written when no endpoint wants it."""

from __future__ import annotations

import json
import secrets

from appliance.common import clock
from appliance.common.compiled import insert_new
from appliance.dispatch.db import database
from appliance.dispatch.models import CompanyWebhook, Order, WebhookDelivery, WebhookMessage
from appliance.dispatch.orders.serializers import order_body

ORDER_EVENTS = (
    "order.created",
    "order.assigned",
    "order.picked_up",
    "order.delivered",
    "order.failed",
    "order.cancelled",
)
# The statuses whose reaching is announced (order.assigned is announced by the assignment, once
# the courier is set: appliance/dispatch/orders/service.py).
ANNOUNCED_STATUSES = frozenset({"picked_up", "delivered", "failed", "cancelled"})


def _endpoints(company_id: int) -> list[tuple[int, frozenset[str]]]:
    rows = CompanyWebhook.select(CompanyWebhook.id, CompanyWebhook.events).where(
        (CompanyWebhook.company == company_id) & CompanyWebhook.deleted_at.is_null()
    )
    return [(row.id, frozenset(json.loads(row.events))) for row in rows]


def subscribers(company_id: int, event_type: str) -> list[int]:
    """The company's endpoints subscribed to ``event_type``, read once per transaction (an import
    writes thousands of orders in one): an endpoint added meanwhile gets the changes after it."""
    real = database.obj
    if not real.in_transaction():
        endpoints = _endpoints(company_id)
    else:
        outermost = real._state.transactions[0]
        memo: dict[int, list[tuple[int, frozenset[str]]]] | None = getattr(
            outermost, "appliance_webhooks", None
        )
        if memo is None:
            memo = outermost.appliance_webhooks = {}
        if company_id not in memo:
            memo[company_id] = _endpoints(company_id)
        endpoints = memo[company_id]
    return [endpoint for endpoint, events in endpoints if event_type in events]


def announce(order: Order, event_type: str) -> str | None:
    """Queue ``event_type`` for ``order`` in the caller's write transaction; the message id, or
    None when no endpoint of the company is subscribed to it."""
    endpoints = subscribers(order.company_id, event_type)
    if not endpoints:
        return None
    moment = clock.now()
    message_id = "msg_" + secrets.token_hex(12)
    body = {"type": event_type, "timestamp": clock.iso(moment), "data": {"order": order_body(order)}}
    message = WebhookMessage(
        message_id=message_id,
        company=order.company_id,
        event_type=event_type,
        payload=json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=str),
        created_at=moment,
    )
    insert_new(message)
    for endpoint_id in endpoints:
        insert_new(
            WebhookDelivery(
                message=message.id, endpoint=endpoint_id, next_attempt_at=moment, created_at=moment
            )
        )
    return message_id
