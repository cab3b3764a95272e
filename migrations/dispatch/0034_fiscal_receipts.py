"""Fiscal receipts through e-HDM (issue 47): a company's e-HDM credentials (the client key sealed
under the master key), the outbox of receipts to print (one sale and at most one return per order,
written in the delivery's transaction), and on "order" the item lines the receipt lists, the
partner's TIN and the printed receipt's number and QR text. Self-contained: frozen copies of the
tables, plain columns on "order"."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class Order(Frozen):
    class Meta:
        table_name = "order"


class FiscalSettings(Frozen):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    enabled = peewee.BooleanField(default=False)
    base_url = peewee.CharField(max_length=300)
    crn = peewee.CharField(max_length=32)
    certificate_pem = peewee.TextField()
    key_cipher = peewee.BlobField()
    server_ca_pem = peewee.TextField(null=True)
    cashier_id = peewee.IntegerField()
    department = peewee.IntegerField()
    tax_regime = peewee.IntegerField()
    adg_code = peewee.CharField(max_length=16)
    fee_adg_code = peewee.CharField(max_length=16, null=True)
    unit = peewee.CharField(max_length=20)
    issue_as_agent = peewee.BooleanField(default=False)
    fee_on_receipt = peewee.BooleanField(default=True)
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "fiscal_settings"


class FiscalReceipt(Frozen):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    kind = peewee.CharField(max_length=8)
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    request = peewee.TextField(null=True)
    call_started_at = UTCDateTimeField(null=True)
    cash_amd = peewee.BigIntegerField()
    receipt_id = peewee.CharField(max_length=64, null=True)
    crn = peewee.CharField(max_length=32, null=True)
    fiscal = peewee.CharField(max_length=64, null=True)
    qr = peewee.TextField(null=True)
    created_at = UTCDateTimeField()
    printed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "fiscal_receipt"
        indexes = (
            (("order", "kind"), True),
            (("status", "next_attempt_at"), False),
            (("company", "status"), False),
        )


def up(db: peewee.Database) -> None:
    create_tables(db, FiscalSettings, FiscalReceipt)
    db.execute_sql('ALTER TABLE "order" ADD COLUMN fiscal_items TEXT')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN partner_tin VARCHAR(8)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN fiscal_receipt_id VARCHAR(64)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN fiscal_number VARCHAR(64)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN fiscal_qr TEXT')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN fiscal_state VARCHAR(16)')
