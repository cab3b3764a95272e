"""Webhook subscriptions: one endpoint (URL and secret) per operator and URL, one subscription row
per event type (the spec's shape: subscriptionId, eventType, endpointUrl, createdAt)."""

from __future__ import annotations

import secrets
from typing import Any

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.problems import BadRequest
from appliance.engine.auth.operators import encrypt_secret, new_secret
from appliance.engine.db import database
from appliance.engine.models import WebhookEndpoint, WebhookSubscription
from appliance.engine.webhooks.events import EVENT_TYPES


def _entry(row: WebhookSubscription, url: str) -> dict[str, Any]:
    return {
        "subscriptionId": row.subscription_id,
        "eventType": row.event_type,
        "endpointUrl": url,
        "createdAt": clock.iso(row.created_at),
    }


def check_endpoint(url: str, allow_private: bool) -> None:
    try:
        host, port, _ = transport.check_url(url)
        transport.resolve(host, port, allow_private)
    except transport.Refused as exc:
        raise BadRequest(
            f"The webhook endpoint is refused: {exc}.", errors=[{"field": "endpointUrl", "message": str(exc)}]
        ) from None


def subscribe(
    master_key: bytes, allow_private: bool, operator_id: str, url: str, event_types: list[str] | None
) -> tuple[dict[str, Any], bool]:
    """(body, created). Subscribing a known URL again re-activates it and adds the types."""
    check_endpoint(url, allow_private)
    wanted = list(dict.fromkeys(event_types or EVENT_TYPES))
    secret: str | None = None
    with write_transaction(database):
        endpoint = WebhookEndpoint.get_or_none(
            (WebhookEndpoint.operator == operator_id) & (WebhookEndpoint.url == url)
        )
        created = endpoint is None
        if endpoint is None:
            endpoint_id = "whe_" + secrets.token_hex(12)
            secret = new_secret()
            endpoint = WebhookEndpoint.create(
                endpoint_id=endpoint_id,
                operator=operator_id,
                url=url,
                secret=encrypt_secret(master_key, operator_id, endpoint_id, secret),
            )
        else:
            WebhookEndpoint.update(active=True, disabled_at=None, failing_since=None).where(
                WebhookEndpoint.id == endpoint.id
            ).execute()
        have = {
            s.event_type
            for s in WebhookSubscription.select().where(WebhookSubscription.endpoint == endpoint.id)
        }
        for event_type in wanted:
            if event_type not in have:
                WebhookSubscription.create(
                    subscription_id="wsub_" + secrets.token_hex(12),
                    endpoint=endpoint.id,
                    event_type=event_type,
                )
        rows = WebhookSubscription.select().where(
            (WebhookSubscription.endpoint == endpoint.id) & (WebhookSubscription.event_type.in_(wanted))
        )
        entries = [_entry(r, url) for r in rows.order_by(WebhookSubscription.id)]
    return {
        "operatorId": operator_id,
        "endpointUrl": url,
        "secret": secret,
        "subscriptions": entries,
    }, created


def active_subscriptions(operator_id: str) -> dict[str, Any]:
    rows = (
        WebhookSubscription.select(WebhookSubscription, WebhookEndpoint)
        .join(WebhookEndpoint)
        .where((WebhookEndpoint.operator == operator_id) & WebhookEndpoint.active)
        .order_by(WebhookSubscription.id)
    )
    return {"operatorId": operator_id, "subscriptions": [_entry(r, r.endpoint.url) for r in rows]}


def endpoints(operator_id: str | None) -> list[dict[str, Any]]:
    """Every endpoint, disabled ones with their last error (for `appliance webhook list`)."""
    query = WebhookEndpoint.select().order_by(WebhookEndpoint.id)
    if operator_id:
        query = query.where(WebhookEndpoint.operator == operator_id)
    return [
        {
            "endpointId": e.endpoint_id,
            "operatorId": e.operator_id,
            "endpointUrl": e.url,
            "active": bool(e.active),
            "eventTypes": [s.event_type for s in e.subscriptions],
            "failingSince": clock.iso(e.failing_since),
            "disabledAt": clock.iso(e.disabled_at),
            "lastError": e.last_error,
        }
        for e in query
    ]
