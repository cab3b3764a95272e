"""The event log (the webhook outbox), operators' endpoints, subscriptions and deliveries."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.operators import Operator


class WebhookEvent(BaseModel):
    """An event for an operator, written in the transaction of the change it announces (outbox)."""

    event_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    payload = peewee.TextField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_event"


class WebhookEndpoint(BaseModel):
    """An operator's receiver URL with its signing secret (encrypted under appliance.key)."""

    endpoint_id = peewee.CharField(max_length=64, unique=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    url = peewee.CharField(max_length=2048)
    secret = peewee.BlobField()
    active = peewee.BooleanField(default=True)
    failing_since = UTCDateTimeField(null=True)
    disabled_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_endpoint"


class WebhookSubscription(BaseModel):
    """The spec's subscription: one event type delivered to one endpoint."""

    subscription_id = peewee.CharField(max_length=64, unique=True)
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, backref="subscriptions", on_delete="RESTRICT")
    event_type = peewee.CharField(max_length=64)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_subscription"


class WebhookDelivery(BaseModel):
    """One event to one endpoint, retried until delivered or given up (status failed)."""

    event = peewee.ForeignKeyField(WebhookEvent, on_delete="RESTRICT")
    endpoint = peewee.ForeignKeyField(WebhookEndpoint, on_delete="RESTRICT")
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    delivered_at = UTCDateTimeField(null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "webhook_delivery"
