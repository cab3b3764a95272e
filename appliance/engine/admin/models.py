"""The administrator's account and sessions (migration 0026)."""

import peewee

from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel


class AdminAccount(BaseModel):
    id = peewee.IntegerField(primary_key=True)  # always 1: one administrator per deployment
    password_hash = peewee.CharField(max_length=255)
    totp_cipher = peewee.BlobField()  # the TOTP secret, sealed under the data key
    last_totp_step = peewee.BigIntegerField(default=0)  # a code is accepted once
    failures = peewee.IntegerField(default=0)
    locked_until = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "admin_account"


class AdminSession(BaseModel):
    token_hash = peewee.CharField(max_length=64, unique=True)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)
    remote = peewee.CharField(max_length=100)

    class Meta:
        table_name = "admin_session"
