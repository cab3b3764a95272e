"""A 300-order day in a few clicks (issue 45): the kept answers of POST /orders/bulk under an
Idempotency-Key, and the courier a picked-up order was handed over from (POST
/orders/{id}/reassign). Self-contained: a frozen copy of the table and one nullable column."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class BulkRequest(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    key = peewee.CharField(max_length=128)
    request_hash = peewee.CharField(max_length=64)
    response = peewee.TextField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "bulk_request"
        indexes = ((("company", "key"), True),)


def up(db: peewee.Database) -> None:
    create_tables(db, BulkRequest)
    db.execute_sql(
        'ALTER TABLE "order" ADD COLUMN handed_over_from_id INTEGER NULL '
        "REFERENCES courier (id) ON DELETE SET NULL"
    )
