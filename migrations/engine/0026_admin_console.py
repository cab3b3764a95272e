"""The engine administrator's console (issue 48): one administrator account (an argon2 password
hash and a TOTP secret sealed under the data key) and its short sessions (token hashes only).
Self-contained: it creates only its own tables."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class AdminAccount(Frozen):
    id = peewee.IntegerField(primary_key=True)
    password_hash = peewee.CharField(max_length=255)
    totp_cipher = peewee.BlobField()
    last_totp_step = peewee.BigIntegerField(default=0)
    failures = peewee.IntegerField(default=0)
    locked_until = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "admin_account"


class AdminSession(Frozen):
    token_hash = peewee.CharField(max_length=64, unique=True)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)
    remote = peewee.CharField(max_length=100)

    class Meta:
        table_name = "admin_session"


def up(db: peewee.Database) -> None:
    create_tables(db, AdminAccount, AdminSession)
