"""A company's pay rule for its couriers (issue 46): what a courier earns per delivery, per
kilometre or per hour, with a minimum per working day, set by the owner. One row per company (none:
no rule, the earnings show no pay). Self-contained: a frozen copy of the table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class PayRule(Frozen):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    basis = peewee.CharField(max_length=8)
    rate_amd = peewee.BigIntegerField()
    minimum_amd = peewee.BigIntegerField(default=0)
    updated_at = UTCDateTimeField()
    updated_by_id = peewee.BigIntegerField(null=True)

    class Meta:
        table_name = "pay_rule"


def up(db: peewee.Database) -> None:
    create_tables(db, PayRule)
