"""Recipient tracking links and ratings."""

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
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    token_hash = peewee.CharField(max_length=64, unique=True)
    created_at = UTCDateTimeField()
    expires_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "tracking_link"
        indexes = ((("order", "revoked_at"), False),)


class Rating(Frozen):
    order = peewee.ForeignKeyField(Order, unique=True, on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    ok = peewee.BooleanField()
    comment = peewee.CharField(max_length=1000, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "rating"


def up(db: peewee.Database) -> None:
    create_tables(db, TrackingLink, Rating)
