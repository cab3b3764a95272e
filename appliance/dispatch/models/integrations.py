"""Shops as integrations: a company's integration keys, its webhook endpoints, and the outbox of
order webhooks (a message per order change, a delivery per subscribed endpoint)."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company, User


class IntegrationKey(BaseModel):
    """A key is shown once (when created) and stored only as its SHA-256 hash."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    name = peewee.CharField(max_length=200)
    key_hash = peewee.CharField(max_length=64, unique=True)
    created_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL", backref="+")
    created_at = UTCDateTimeField(default=now)
    revoked_at = UTCDateTimeField(null=True)
    # Migration 0032 (issue 47): the proof this key's orders need when they name none (NULL: the
    # company's setting).
    proof_required = peewee.CharField(max_length=64, null=True)

    class Meta:
        table_name = "integration_key"


class CompanyWebhook(BaseModel):
    """An https receiver of the company's order webhooks; its signing secret rests encrypted."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    url = peewee.CharField(max_length=2048)
    events = peewee.TextField()  # JSON list of event types
    secret_cipher = peewee.BlobField()
    created_at = UTCDateTimeField(default=now)
    deleted_at = UTCDateTimeField(null=True)
    failing_since = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)

    class Meta:
        table_name = "company_webhook"


class WebhookMessage(BaseModel):
    """One order change to announce, written in the change's transaction (the outbox). Its
    ``message_id`` is the ``webhook-id`` of every attempt to every endpoint."""

    message_id = peewee.CharField(max_length=40, unique=True)
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    event_type = peewee.CharField(max_length=32)
    payload = peewee.TextField()  # the exact bytes that are signed and sent
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_message"


class WebhookDelivery(BaseModel):
    """One message to one endpoint: queued until delivered, or failed (given up)."""

    message = peewee.ForeignKeyField(WebhookMessage, on_delete="CASCADE")
    endpoint = peewee.ForeignKeyField(CompanyWebhook, on_delete="CASCADE")
    status = peewee.CharField(max_length=16, default="queued")  # queued, delivered, failed
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    delivered_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "order_webhook_delivery"
