"""Webhook endpoints (one secret each, encrypted), their subscriptions (one row per event type, the
spec's shape) and one delivery row per event and endpoint (the outbox's queue)."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class WebhookEvent(Frozen):
    class Meta:
        table_name = "webhook_event"


class WebhookEndpoint(Frozen):
    endpoint_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    url = peewee.CharField(max_length=2048)
    secret = peewee.BlobField()
    active = peewee.BooleanField(default=True)
    failing_since = UTCDateTimeField(null=True)
    disabled_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_endpoint"
        indexes = ((("operator", "url"), True),)


class WebhookSubscription(Frozen):
    subscription_id = peewee.CharField(max_length=64, unique=True)
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_subscription"
        indexes = ((("endpoint", "event_type"), True),)


class WebhookDelivery(Frozen):
    event = peewee.ForeignKeyField(WebhookEvent, on_delete="RESTRICT")
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, on_delete="RESTRICT")
    status = peewee.CharField(max_length=16)  # queued, delivered, failed
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    delivered_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "webhook_delivery"
        indexes = (
            (("event", "endpoint"), True),
            (("status", "next_attempt_at"), False),
        )


def up(db: peewee.Database) -> None:
    create_tables(db, WebhookEndpoint, WebhookSubscription, WebhookDelivery)
