"""Recipient messages (issue 28): a company's settings for messages to recipients, the outbox of
those messages (one row per message, written in the order change's transaction) and the tracking
link an order's messages share. Tables made by migrations/dispatch/0016_recipient_messages.py."""

from __future__ import annotations

import peewee

from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company
from appliance.dispatch.models.orders import Order
from appliance.dispatch.models.tracking import TrackingLink


class RecipientSettings(BaseModel):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    default_language = peewee.CharField(max_length=2, default="hy")
    events = peewee.TextField(default="[]")  # JSON list of the events that send
    templates = peewee.TextField(default="{}")  # JSON {event: {language: text}}
    sms_enabled = peewee.BooleanField(default=False)
    email_enabled = peewee.BooleanField(default=False)
    smpp_host = peewee.CharField(max_length=255, null=True)
    smpp_port = peewee.IntegerField(null=True)
    smpp_system_id = peewee.CharField(max_length=16, null=True)
    # AES-GCM under a subkey of the master key (messages/secrets.py); never stored in the clear.
    smpp_password_cipher = peewee.BlobField(null=True)
    smpp_source_addr = peewee.CharField(max_length=21, null=True)
    smpp_tls = peewee.BooleanField(default=False)
    smpp_per_second = peewee.IntegerField(default=10)
    arriving_minutes = peewee.IntegerField(default=10)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "recipient_settings"


class RecipientMessage(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    attempt = peewee.IntegerField()
    event = peewee.CharField(max_length=16)  # assigned, picked_up, arriving, delivered, failed, late
    channel = peewee.CharField(max_length=8)  # sms, email
    to_address = peewee.CharField(max_length=320)
    language = peewee.CharField(max_length=2)
    data = peewee.TextField(default="{}")  # what the text needs beyond the order (late: minutes)
    # order:attempt:event:channel for the automatic events, so that one is never queued twice;
    # NULL for late notices a dispatcher sends (each press is a message).
    dedupe_key = peewee.CharField(max_length=80, null=True, unique=True)
    body = peewee.TextField(null=True)  # the text as sent, its link token replaced by {token}
    segments = peewee.IntegerField(null=True)
    # queued → sent → delivered | undelivered (the provider's receipt); failed when given up;
    # skipped when the order overtook it while it waited (sender._outdated).
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    provider_message_id = peewee.CharField(max_length=65, null=True)
    created_at = UTCDateTimeField()
    sent_at = UTCDateTimeField(null=True)
    receipt_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "recipient_message"


class RecipientLink(BaseModel):
    """The tracking link an order's messages carry, so that every message repeats the link the
    recipient already has. The token is kept encrypted (a tracking link is stored as a hash)."""

    order = peewee.ForeignKeyField(Order, primary_key=True, on_delete="CASCADE")
    link = peewee.ForeignKeyField(TrackingLink, on_delete="CASCADE")
    token_cipher = peewee.BlobField()

    class Meta:
        table_name = "recipient_link"
