"""Single-use link tokens (magic sign-in links, invites, member login links), the record of
invites made, and queued mail."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company, Courier, User


class LinkToken(BaseModel):
    """A link's token is shown once (in the link) and stored only as its SHA-256 hash."""

    kind = peewee.CharField(max_length=16)  # magic, invite, sign_in, password
    token_hash = peewee.CharField(max_length=64, unique=True)
    company = peewee.ForeignKeyField(Company, null=True, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, null=True, on_delete="CASCADE")
    role = peewee.CharField(max_length=16, null=True)
    name = peewee.CharField(max_length=200, null=True)
    email = peewee.CharField(max_length=320, null=True)
    phone = peewee.CharField(max_length=40, null=True)
    vehicle = peewee.CharField(max_length=120, null=True)
    invited_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL", backref="+")
    # The courier profile (POST /couriers) an invite attaches its account to. Such an invite is
    # only ever mailed, never shown to the dispatcher, so accepting it proves the mailbox.
    courier = peewee.ForeignKeyField(Courier, null=True, on_delete="CASCADE", backref="+")
    created_at = UTCDateTimeField(default=now)
    expires_at = UTCDateTimeField()
    used_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "link_token"


class InviteRecord(BaseModel):
    """Every invite made through POST /company/invites, append-only (0020_invite_record): who
    invited which address, as what, when. Plain ids: it outlives the link and the inviter."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    link_id = peewee.BigIntegerField(null=True)
    invited_by_id = peewee.BigIntegerField(null=True)
    inviter_name = peewee.CharField(max_length=200, null=True)
    role = peewee.CharField(max_length=16)
    name = peewee.CharField(max_length=200)
    email = peewee.CharField(max_length=320, null=True)
    phone = peewee.CharField(max_length=40, null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "invite_record"


class OutgoingMail(BaseModel):
    to_address = peewee.CharField(max_length=320)
    subject = peewee.CharField(max_length=300)
    # Every link's token replaced by {token}: the tokens rest sealed in link_tokens until sent.
    body = peewee.TextField()
    link_tokens = peewee.BlobField(null=True)  # common/mail.py: AES-GCM, dropped once handed over
    # The kind of a message queued by address only, which the worker composes (or drops).
    compose = peewee.CharField(max_length=32, null=True)
    # queued → sent, or failed (a message that cannot be built; last_error says why)
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(default=now)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=now)
    sent_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "outgoing_mail"


class JobLease(BaseModel):
    """A background job's single-holder lease and when it last ran (housekeeping)."""

    name = peewee.CharField(max_length=32, primary_key=True)
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)
    last_run_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "job_lease"
