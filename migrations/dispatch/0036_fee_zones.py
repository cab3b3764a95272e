"""Delivery fee zones (issue 47): polygons a dispatcher draws on the console's map, each with the
rules of the fee charged to the shop for an order whose pin lies inside it: a base fee, a fee per
kilometre on roads from the company's depot, a fee per kilogram above a threshold, and a share of
the cash on delivery in basis points. Self-contained: a frozen copy of the table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class FeeZone(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    name = peewee.CharField(max_length=100)
    polygon = peewee.TextField()  # JSON [[lat, lon], …], 3 to 200 vertices, not closed
    base_fee_amd = peewee.BigIntegerField(default=0)
    per_km_amd = peewee.BigIntegerField(default=0)
    weight_threshold_kg = peewee.DoubleField(default=0)
    per_kg_amd = peewee.BigIntegerField(default=0)
    cod_basis_points = peewee.IntegerField(default=0)
    created_at = UTCDateTimeField()
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "fee_zone"
        indexes = ((("company", "id"), False),)


def up(db: peewee.Database) -> None:
    create_tables(db, FeeZone)
