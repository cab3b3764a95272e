"""Shops as integrations (issue 27 item 4): integration keys (only a SHA-256 hash of each key),
webhook endpoints (the signing secret encrypted), and the outbox of order webhooks: a message per
order change, written in the change's transaction, and one delivery row per subscribed endpoint,
claimed with a lease by the sender. Self-contained: frozen copies of its tables."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class User(Frozen):
    class Meta:
        table_name = "user"


class IntegrationKey(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    name = peewee.CharField(max_length=200)
    key_hash = peewee.CharField(max_length=64, unique=True)
    created_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL", backref="+")
    created_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "integration_key"


class CompanyWebhook(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    url = peewee.CharField(max_length=2048)
    events = peewee.TextField()
    secret_cipher = peewee.BlobField()
    created_at = UTCDateTimeField()
    deleted_at = UTCDateTimeField(null=True)
    failing_since = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)

    class Meta:
        table_name = "company_webhook"


class WebhookMessage(Frozen):
    message_id = peewee.CharField(max_length=40, unique=True)
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    event_type = peewee.CharField(max_length=32)
    payload = peewee.TextField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_message"


class WebhookDelivery(Frozen):
    message = peewee.ForeignKeyField(WebhookMessage, on_delete="CASCADE")
    endpoint = peewee.ForeignKeyField(CompanyWebhook, on_delete="CASCADE")
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    delivered_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "order_webhook_delivery"
        indexes = ((("status", "next_attempt_at"), False),)


def up(db: peewee.Database) -> None:
    create_tables(db, IntegrationKey, CompanyWebhook, WebhookMessage, WebhookDelivery)
