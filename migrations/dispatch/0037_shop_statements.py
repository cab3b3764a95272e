"""Shop statements and remittances (issue 47). order.shop_key_id: the integration key (the shop)
an order came from, a plain id (the statement outlives a revoked key), set when a key creates or
imports the order. shop_remittance: a period of a shop's statement marked paid by the owner, with
its reference and the amounts paid; periods of one shop never overlap (checked by the service in
the write transaction; the unique index refuses the same period twice in the database itself).
Self-contained: a frozen copy of the table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class ShopRemittance(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    shop_key_id = peewee.BigIntegerField()
    period_start = peewee.DateField()
    period_end = peewee.DateField()  # the day after the last, as the reports' [from, to)
    orders = peewee.IntegerField()
    collected_amd = peewee.BigIntegerField()
    fees_amd = peewee.BigIntegerField()
    net_amd = peewee.BigIntegerField()
    reference = peewee.CharField(max_length=200)
    paid_at = UTCDateTimeField()
    paid_by_id = peewee.BigIntegerField(null=True)  # a plain id: the row outlives the account

    class Meta:
        table_name = "shop_remittance"
        indexes = ((("company", "shop_key_id", "period_start"), True),)


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "order" ADD COLUMN shop_key_id BIGINT')
    db.execute_sql(
        'CREATE INDEX order_company_shop_key_finished ON "order" (company_id, shop_key_id, finished_at)'
    )
    create_tables(db, ShopRemittance)
