"""Recipient tracking links (stored as token hashes) and ratings."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company
from appliance.dispatch.models.orders import Order


class TrackingLink(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    token_hash = peewee.CharField(max_length=64, unique=True)
    created_at = UTCDateTimeField(default=now)
    expires_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)
    # Migration 0015: the token encrypted (tracking/service.py), so the console can show the link
    # in force; NULL for links issued before.
    token_cipher = peewee.BlobField(null=True)

    class Meta:
        table_name = "tracking_link"


class Rating(BaseModel):
    order = peewee.ForeignKeyField(Order, unique=True, on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    ok = peewee.BooleanField()
    comment = peewee.CharField(max_length=1000, null=True)
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "rating"
