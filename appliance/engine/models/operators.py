"""Operators and their API secrets (migrations/engine 0001)."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel


class Operator(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    created_at = UTCDateTimeField(default=now)


class OperatorSecret(BaseModel):
    id = peewee.CharField(max_length=64, primary_key=True)
    operator = peewee.ForeignKeyField(Operator, backref="secrets", on_delete="CASCADE")
    ciphertext = peewee.BlobField()
    created_at = UTCDateTimeField(default=now)
