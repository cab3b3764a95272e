"""Fiscal receipts through e-HDM (migration 0034, issue 47; appliance/dispatch/fiscal/): a
company's e-HDM credentials and the outbox of receipts to print."""

from __future__ import annotations

import peewee

from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company
from appliance.dispatch.models.orders import Order


class FiscalSettings(BaseModel):
    company = peewee.ForeignKeyField(Company, primary_key=True, on_delete="CASCADE")
    enabled = peewee.BooleanField(default=False)
    base_url = peewee.CharField(max_length=300)
    crn = peewee.CharField(max_length=32)  # the cash register's number, bound to the certificate
    certificate_pem = peewee.TextField()  # the client certificate (public)
    # The client certificate's private key: AES-GCM under a subkey of the master key, bound to the
    # company (fiscal/secrets.py); never stored in the clear, never answered.
    key_cipher = peewee.BlobField()
    server_ca_pem = peewee.TextField(null=True)  # the e-HDM server's CA, when not the system's
    cashier_id = peewee.IntegerField()
    department = peewee.IntegerField()
    tax_regime = peewee.IntegerField()  # e_hdm.TaxRegime: 1 VAT, 2 no VAT, 3 turnover, 7 micro
    adg_code = peewee.CharField(max_length=16)  # the default classification (ԱՏԳ) code
    fee_adg_code = peewee.CharField(max_length=16, null=True)  # the delivery-fee line's; adg_code when NULL
    unit = peewee.CharField(max_length=20)
    issue_as_agent = peewee.BooleanField(default=False)  # the shop's TIN as partnerTin
    fee_on_receipt = peewee.BooleanField(default=True)  # the recipient's cash includes the fee
    updated_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "fiscal_settings"


class FiscalReceipt(BaseModel):
    """One receipt to print: ``kind`` sale (written with the delivery) or return. ``status``:
    queued → sending (the call's request stored, its outcome not yet known) → printed; unknown
    (the call may have printed: a person decides), failed (the service refused it)."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    kind = peewee.CharField(max_length=8)
    status = peewee.CharField(max_length=16, default="queued")
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    request = peewee.TextField(null=True)  # the JSON sent, stored before the call
    call_started_at = UTCDateTimeField(null=True)
    cash_amd = peewee.BigIntegerField()
    receipt_id = peewee.CharField(max_length=64, null=True)
    # The cash register that printed it: a return names it (sourceCrn) even after the company's
    # register changed.
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
