"""Queueing recipient messages, always inside the transaction of the change that causes them
(orders/state.transition calls ``on_status``): the row is the promise to send, so a status change
that commits has its messages, and one that rolls back has none. Nothing here talks to a
provider; the sender (messages/sender.py) does, later, so an outage never slows a status change."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.dispatch.models import Order, RecipientMessage, RecipientSettings

# The status changes that are events of their own name.
STATUS_EVENTS = frozenset({"assigned", "picked_up", "delivered", "failed"})


def enabled_events(settings: RecipientSettings) -> set[str]:
    return set(json.loads(settings.events or "[]"))


def channels(settings: RecipientSettings, order: Order) -> list[tuple[str, str]]:
    """(channel, address) pairs this company can reach this recipient on."""
    found = []
    if settings.sms_enabled and settings.smpp_host and order.recipient_phone:
        found.append(("sms", order.recipient_phone))
    if settings.email_enabled and order.recipient_email:
        found.append(("email", order.recipient_email))
    return found


def language_of(settings: RecipientSettings, order: Order) -> str:
    return order.recipient_language or settings.default_language or "hy"


def queue(
    order: Order,
    event: str,
    settings: RecipientSettings,
    *,
    data: dict[str, Any] | None = None,
    once: bool = True,
) -> list[int]:
    """One row per channel; ``once`` (the automatic events) makes a second call for the same
    order, attempt and event a no-op, in the database itself (a unique key)."""
    ids = []
    moment = clock.now()
    for channel, address in channels(settings, order):
        key = f"{order.id}:{order.attempt}:{event}:{channel}" if once else None
        if key is not None and RecipientMessage.select().where(RecipientMessage.dedupe_key == key).exists():
            continue  # queued before (the unique key also stops a concurrent second insert)
        row_id = (
            RecipientMessage.insert(
                company=order.company_id,
                order=order.id,
                attempt=order.attempt,
                event=event,
                channel=channel,
                to_address=address,
                language=language_of(settings, order),
                data=json.dumps(data or {}),
                dedupe_key=key,
                status="queued",
                next_attempt_at=moment,
                created_at=moment,
            )
            .on_conflict_ignore()
            .execute()
        )
        if row_id:
            ids.append(int(row_id))
    return ids


def on_status(order: Order, to_status: str) -> None:
    """Called by the state machine in the status change's transaction."""
    if to_status not in STATUS_EVENTS:
        return
    settings = RecipientSettings.get_or_none(RecipientSettings.company == order.company_id)
    if settings is None or to_status not in enabled_events(settings):
        return
    queue(order, to_status, settings)
