"""A company's pay rule for its couriers (migration 0030, issue 46; couriers/pay.py)."""

from __future__ import annotations

import peewee

from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company


class PayRule(BaseModel):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    basis = peewee.CharField(max_length=8)  # delivery, km or hour
    rate_amd = peewee.BigIntegerField()  # per delivery, per kilometre or per hour
    minimum_amd = peewee.BigIntegerField(default=0)  # at least this for a day worked
    updated_at = UTCDateTimeField()
    updated_by_id = peewee.BigIntegerField(null=True)  # a plain id: the rule outlives the account

    class Meta:
        table_name = "pay_rule"
