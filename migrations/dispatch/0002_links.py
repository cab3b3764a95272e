"""Sign-in links, invites and member login links (one table of single-use tokens), and the
outgoing mail queue."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class User(Frozen):
    class Meta:
        table_name = "user"


class LinkToken(Frozen):
    kind = peewee.CharField(max_length=16)  # magic, invite, sign_in
    token_hash = peewee.CharField(max_length=64, unique=True)
    company = peewee.ForeignKeyField(Company, null=True, on_delete="CASCADE")
    user = peewee.ForeignKeyField(User, null=True, on_delete="CASCADE")
    role = peewee.CharField(max_length=16, null=True)
    name = peewee.CharField(max_length=200, null=True)
    email = peewee.CharField(max_length=320, null=True)
    phone = peewee.CharField(max_length=40, null=True)
    vehicle = peewee.CharField(max_length=120, null=True)
    invited_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL", backref="+")
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()
    used_at = UTCDateTimeField(null=True)
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "link_token"
        indexes = ((("company", "kind"), False),)


class OutgoingMail(Frozen):
    to_address = peewee.CharField(max_length=320)
    subject = peewee.CharField(max_length=300)
    body = peewee.TextField()
    status = peewee.CharField(max_length=16, default="queued")  # queued, sending, sent
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField()
    lease_until = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField()
    sent_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "outgoing_mail"
        indexes = ((("status", "next_attempt_at"), False),)


def up(db: peewee.Database) -> None:
    create_tables(db, LinkToken, OutgoingMail)
