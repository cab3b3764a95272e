"""Delivery fee zones and shop remittances (issue 47; migrations 0036 and 0037; fees/, statements/)."""

from __future__ import annotations

import peewee

from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company


class FeeZone(BaseModel):
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


class ShopRemittance(BaseModel):
    """A period of a shop's statement paid by the owner: what was paid, and the reference."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    shop_key_id = peewee.BigIntegerField()
    period_start = peewee.DateField()
    period_end = peewee.DateField()  # the day after the last: [start, end)
    orders = peewee.IntegerField()
    collected_amd = peewee.BigIntegerField()
    fees_amd = peewee.BigIntegerField()
    net_amd = peewee.BigIntegerField()
    reference = peewee.CharField(max_length=200)
    paid_at = UTCDateTimeField()
    paid_by_id = peewee.BigIntegerField(null=True)

    class Meta:
        table_name = "shop_remittance"
