"""Integration keys and webhook endpoints of a company (owners manage keys; owners and the
company's keys manage webhooks). A key is shown once and rests as its SHA-256 hash; a webhook's
signing secret is shown once and rests encrypted under a subkey of appliance.key."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from typing import Any

from appliance.common import clock
from appliance.common import webhook_transport as transport
from appliance.common.db import write_transaction
from appliance.common.keys import seal, unseal
from appliance.common.problems import BadRequest, Conflict, NotFound
from appliance.dispatch import audit
from appliance.dispatch.db import database
from appliance.dispatch.integrations import signing
from appliance.dispatch.integrations.outbox import ORDER_EVENTS
from appliance.dispatch.models import CompanyWebhook, IntegrationKey, WebhookDelivery, WebhookMessage
from appliance.dispatch.orders import ids, proof

KEY_PREFIX = "ik_"  # never the start of an access token (a JWT starts with "eyJ")
SECRET_PURPOSE = "dispatch-webhook-secrets"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _key_body(row: IntegrationKey) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "name": row.name,
        "createdAt": clock.iso(row.created_at),
        "proofRequired": None if row.proof_required is None else proof.kinds_of(row.proof_required),
    }


def create_key(
    company_id: int, user_id: int, name: str, proof_required: Sequence[str] | None = None
) -> dict[str, Any]:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    kinds = proof.stored(proof_required)
    with write_transaction(database):
        row = IntegrationKey.create(
            company=company_id,
            name=name,
            key_hash=key_hash(key),
            created_by=user_id,
            created_at=clock.now(),
            proof_required=kinds,
        )
        audit.record(
            "integration_key.created",
            f"key:{row.id}",
            company_id=company_id,
            after={"name": name, "proofRequired": kinds},
        )
    return {**_key_body(row), "key": key}


def update_key(company_id: int, key_id: int, proof_required: Sequence[str] | None) -> dict[str, Any]:
    """The proof the key's new orders need when they name none (None: the company's setting).
    Orders the key already sent keep what they were given."""
    ids.require(key_id, "integration key")
    kinds = proof.stored(proof_required)
    with write_transaction(database):
        row = (
            IntegrationKey.select()
            .where(
                (IntegrationKey.id == key_id)
                & (IntegrationKey.company == company_id)
                & IntegrationKey.revoked_at.is_null()
            )
            .first()
        )
        if row is None:
            raise NotFound("No such integration key.")
        before = row.proof_required
        row.proof_required = kinds
        row.save()
        audit.record(
            "integration_key.changed",
            f"key:{key_id}",
            company_id=company_id,
            before={"proofRequired": before},
            after={"proofRequired": kinds},
        )
    return _key_body(row)


def list_keys(company_id: int) -> list[dict[str, Any]]:
    rows = IntegrationKey.select().where(
        (IntegrationKey.company == company_id) & IntegrationKey.revoked_at.is_null()
    )
    return [_key_body(row) for row in rows.order_by(IntegrationKey.id)]


def revoke_key(company_id: int, key_id: int) -> None:
    """Revoked at once: every request authenticates its key against this row."""
    ids.require(key_id, "integration key")
    with write_transaction(database):
        updated = (
            IntegrationKey.update(revoked_at=clock.now())
            .where(
                (IntegrationKey.id == key_id)
                & (IntegrationKey.company == company_id)
                & IntegrationKey.revoked_at.is_null()
            )
            .execute()
        )
        if updated == 1:
            audit.record("integration_key.revoked", f"key:{key_id}", company_id=company_id)
    if updated != 1:
        raise NotFound("No such integration key.")


def key_of(key: str) -> IntegrationKey | None:
    """The unrevoked key row of a presented key, or None."""
    return IntegrationKey.get_or_none(
        (IntegrationKey.key_hash == key_hash(key)) & IntegrationKey.revoked_at.is_null()
    )


# -- webhook endpoints -------------------------------------------------------------------------------


def _context(company_id: int, endpoint_id: int) -> str:
    return f"{company_id}/{endpoint_id}"  # binds a ciphertext to its row


def endpoint_secret(master_key: bytes, endpoint: CompanyWebhook) -> str:
    return unseal(
        master_key, SECRET_PURPOSE, _context(endpoint.company_id, endpoint.id), endpoint.secret_cipher
    )


def _webhook_body(row: CompanyWebhook) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "url": row.url,
        "events": json.loads(row.events),
        "createdAt": clock.iso(row.created_at),
        "failingSince": clock.iso(row.failing_since),
        "lastError": row.last_error,
    }


def check_url(url: str, allow_private: bool) -> None:
    """The payout engine's rules (common/webhook_transport.py): https, no credentials, and a host
    resolving to public addresses only unless ``webhook_allow_private``."""
    try:
        host, port, _ = transport.check_url(url)
        transport.resolve(host, port, allow_private)
    except transport.Refused as exc:
        raise BadRequest(
            f"The webhook endpoint is refused: {exc}.", errors=[{"field": "url", "message": str(exc)}]
        ) from None


def create_webhook(
    master_key: bytes, allow_private: bool, company_id: int, url: str, events: list[str]
) -> dict[str, Any]:
    check_url(url, allow_private)
    wanted = [e for e in ORDER_EVENTS if e in set(events)]  # in the documented order, once each
    secret = signing.new_secret()
    with write_transaction(database):
        row = CompanyWebhook.create(
            company=company_id, url=url, events=json.dumps(wanted), secret_cipher=b"", created_at=clock.now()
        )
        row.secret_cipher = seal(master_key, SECRET_PURPOSE, _context(company_id, row.id), secret)
        row.save()
        audit.record(
            "webhook.created",
            f"webhook:{row.id}",
            company_id=company_id,
            after={"url": url, "events": wanted},
        )
    return {**_webhook_body(row), "secret": secret}


def list_webhooks(company_id: int) -> list[dict[str, Any]]:
    rows = CompanyWebhook.select().where(
        (CompanyWebhook.company == company_id) & CompanyWebhook.deleted_at.is_null()
    )
    return [_webhook_body(row) for row in rows.order_by(CompanyWebhook.id)]


def delete_webhook(company_id: int, webhook_id: int) -> None:
    """Nothing more is sent to it: its queued deliveries are given up in the same transaction."""
    ids.require(webhook_id, "webhook")
    moment = clock.now()
    with write_transaction(database):
        updated = (
            CompanyWebhook.update(deleted_at=moment)
            .where(
                (CompanyWebhook.id == webhook_id)
                & (CompanyWebhook.company == company_id)
                & CompanyWebhook.deleted_at.is_null()
            )
            .execute()
        )
        if updated != 1:
            raise NotFound("No such webhook.")
        audit.record("webhook.deleted", f"webhook:{webhook_id}", company_id=company_id)
        WebhookDelivery.update(status="failed", last_error="the endpoint was deleted").where(
            (WebhookDelivery.endpoint == webhook_id) & (WebhookDelivery.status == "queued")
        ).execute()


# -- deliveries (the console's view of an endpoint) ----------------------------------------------------

DELIVERIES_SHOWN = 100


def _live_webhook(company_id: int, webhook_id: int) -> CompanyWebhook:
    """The company's undeleted endpoint; another company's is missing, as an unknown one."""
    ids.require(webhook_id, "webhook")
    row = CompanyWebhook.get_or_none(
        (CompanyWebhook.id == webhook_id)
        & (CompanyWebhook.company == company_id)
        & CompanyWebhook.deleted_at.is_null()
    )
    if row is None:
        raise NotFound("No such webhook.")
    return row


def _delivery_body(row: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "messageId": row.message.message_id,
        "eventType": row.message.event_type,
        "status": row.status,
        "attempts": row.attempts,
        "lastError": row.last_error,
        "createdAt": clock.iso(row.created_at),
        "nextAttemptAt": clock.iso(row.next_attempt_at) if row.status == "queued" else None,
        "deliveredAt": clock.iso(row.delivered_at),
    }


def _deliveries(company_id: int, webhook_id: int) -> Any:
    # The company is in the query itself, not only in the endpoint looked up before it.
    return (
        WebhookDelivery.select(WebhookDelivery, WebhookMessage)
        .join(WebhookMessage)
        .switch(WebhookDelivery)
        .join(CompanyWebhook)
        .where(
            (WebhookDelivery.endpoint == webhook_id)
            & (CompanyWebhook.company == company_id)
            & (WebhookMessage.company == company_id)
        )
    )


def list_deliveries(company_id: int, webhook_id: int) -> list[dict[str, Any]]:
    """The endpoint's newest deliveries first, each with its attempts so far and last error."""
    _live_webhook(company_id, webhook_id)
    rows = _deliveries(company_id, webhook_id).order_by(WebhookDelivery.id.desc()).limit(DELIVERIES_SHOWN)
    return [_delivery_body(row) for row in rows]


def resend_delivery(company_id: int, webhook_id: int, delivery_id: int) -> dict[str, Any]:
    """A given-up delivery is queued again, due at once. The sender gives a delivery up once it is
    older than its retry window, so an old one gets one more attempt; a queued one is already
    waiting (the answer is the same, nothing changes); a delivered one is not sent twice (409)."""
    ids.require(delivery_id, "delivery")
    with write_transaction(database):
        _live_webhook(company_id, webhook_id)
        row = _deliveries(company_id, webhook_id).where(WebhookDelivery.id == delivery_id).first()
        if row is None:
            raise NotFound("No such delivery.")
        if row.status == "delivered":
            raise Conflict("The delivery was delivered; it is not sent again.")
        if row.status == "failed":
            WebhookDelivery.update(
                status="queued", next_attempt_at=clock.now(), lease_until=None, lease_holder=None
            ).where((WebhookDelivery.id == delivery_id) & (WebhookDelivery.status == "failed")).execute()
            audit.record(
                "webhook_delivery.resent",
                f"webhook_delivery:{delivery_id}",
                company_id=company_id,
                after={"webhook": str(webhook_id), "messageId": row.message.message_id},
            )
            row = _deliveries(company_id, webhook_id).where(WebhookDelivery.id == delivery_id).get()
    return _delivery_body(row)
