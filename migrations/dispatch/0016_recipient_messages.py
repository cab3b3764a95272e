"""Recipient messages (issue 28): per-company settings for SMS (the company's SMPP provider) and
e-mail, the outbox of messages to recipients written in the order change's transaction, the
tracking link each order's messages reuse, and the recipient's language (and e-mail address) on
the order. Self-contained: frozen copies of the tables, plain columns on "order"."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class Order(Frozen):
    class Meta:
        table_name = "order"


class TrackingLink(Frozen):
    class Meta:
        table_name = "tracking_link"


class RecipientSettings(Frozen):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    default_language = peewee.CharField(max_length=2, default="hy")
    events = peewee.TextField(default="[]")
    templates = peewee.TextField(default="{}")
    sms_enabled = peewee.BooleanField(default=False)
    email_enabled = peewee.BooleanField(default=False)
    smpp_host = peewee.CharField(max_length=255, null=True)
    smpp_port = peewee.IntegerField(null=True)
    smpp_system_id = peewee.CharField(max_length=16, null=True)
    smpp_password_cipher = peewee.BlobField(null=True)
    smpp_source_addr = peewee.CharField(max_length=21, null=True)
    smpp_tls = peewee.BooleanField(default=False)
    smpp_per_second = peewee.IntegerField(default=10)
    arriving_minutes = peewee.IntegerField(default=10)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "recipient_settings"


class RecipientMessage(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    attempt = peewee.IntegerField()
    event = peewee.CharField(max_length=16)
    channel = peewee.CharField(max_length=8)
    to_address = peewee.CharField(max_length=320)
    language = peewee.CharField(max_length=2)
    data = peewee.TextField(default="{}")
    dedupe_key = peewee.CharField(max_length=80, null=True, unique=True)
    body = peewee.TextField(null=True)
    segments = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    provider_message_id = peewee.CharField(max_length=65, null=True)
    created_at = UTCDateTimeField()
    sent_at = UTCDateTimeField(null=True)
    receipt_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "recipient_message"
        indexes = (
            (("status", "next_attempt_at"), False),
            (("order", "id"), False),
            (("company", "provider_message_id"), False),
        )


class RecipientLink(Frozen):
    order = peewee.ForeignKeyField(Order, primary_key=True, on_delete="CASCADE")
    link = peewee.ForeignKeyField(TrackingLink, on_delete="CASCADE")
    token_cipher = peewee.BlobField()

    class Meta:
        table_name = "recipient_link"


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "order" ADD COLUMN recipient_language VARCHAR(2)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN recipient_email VARCHAR(320)')
    create_tables(db, RecipientSettings, RecipientMessage, RecipientLink)
