"""Every invite an owner or dispatcher makes, kept for the company to read (issue 41): an invite
link's answer tells whether its address has an account (the specification's 409
sign_in_required), so what an inviter can learn is bounded (invites per company per hour) and
each invite stays on record: who invited which address, as what, when. Append-only (the database
refuses UPDATE and DELETE); plain ids, not keys, so the record outlives the link row (removed 30
days after it expires) and the inviter's account. Self-contained: a frozen copy of the table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables, forbid_changes


class Company(Frozen):
    class Meta:
        table_name = "company"


class InviteRecord(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    link_id = peewee.BigIntegerField(null=True)
    invited_by_id = peewee.BigIntegerField(null=True)
    inviter_name = peewee.CharField(max_length=200, null=True)
    role = peewee.CharField(max_length=16)
    name = peewee.CharField(max_length=200)
    email = peewee.CharField(max_length=320, null=True)
    phone = peewee.CharField(max_length=40, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "invite_record"
        indexes = ((("company", "created_at"), False),)


def up(db: peewee.Database) -> None:
    create_tables(db, InviteRecord)
    forbid_changes(db, "invite_record")
