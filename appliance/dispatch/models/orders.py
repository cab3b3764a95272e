"""Orders and the daily work around them: audit trail, assignments, realtime events, shifts,
locations, courier status idempotency, cash collections and settlements.

Tables are created by migrations/dispatch/0003_orders.py; order_event and realtime_event are
append-only in the database itself.
"""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.dispatch.models.base import BaseModel
from appliance.dispatch.models.identity import Company, Courier, User


class Settlement(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    status = peewee.CharField(max_length=16)
    expected_amd = peewee.BigIntegerField()
    received_amd = peewee.BigIntegerField(null=True)
    shortfall_amd = peewee.BigIntegerField(null=True)
    note = peewee.CharField(max_length=1000, null=True)
    submitted_at = UTCDateTimeField()
    confirmed_at = UTCDateTimeField(null=True)
    accepted_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL")
    # One awaiting settlement per courier: the column is 1 while submitted, NULL after.
    awaiting = peewee.IntegerField(null=True)

    class Meta:
        table_name = "settlement"
        indexes = ((("courier", "awaiting"), True),)


class Order(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    public_id = peewee.CharField(max_length=16, unique=True)
    status = peewee.CharField(max_length=16)
    recipient_name = peewee.CharField(max_length=200)
    recipient_phone = peewee.CharField(max_length=40)
    amount_amd = peewee.BigIntegerField(default=0)
    otp_required = peewee.BooleanField(default=False)
    otp_hash = peewee.CharField(max_length=64, null=True)
    otp_cipher = peewee.BlobField(null=True)
    otp_attempts = peewee.IntegerField(default=0)
    is_cod = peewee.BooleanField(default=False)
    cod_amount_amd = peewee.BigIntegerField(default=0)
    weight_kg = peewee.DoubleField(null=True)
    window_start = UTCDateTimeField(null=True)
    window_end = UTCDateTimeField(null=True)
    address_hy = peewee.CharField(max_length=500)
    address_en = peewee.CharField(max_length=500, null=True)
    address_ru = peewee.CharField(max_length=500, null=True)
    lat = peewee.DoubleField()
    lon = peewee.DoubleField()
    courier = peewee.ForeignKeyField(Courier, null=True, on_delete="SET NULL")
    sequence = peewee.IntegerField(null=True)
    attempt = peewee.IntegerField(default=1)
    failure_reason = peewee.CharField(max_length=32, null=True)
    proof_recipient_name = peewee.CharField(max_length=200, null=True)
    proof_photo_key = peewee.CharField(max_length=500, null=True)
    proof_notes = peewee.CharField(max_length=1000, null=True)
    proof_method = peewee.CharField(max_length=8, null=True)
    collected_amount_amd = peewee.BigIntegerField(null=True)
    last_courier = peewee.ForeignKeyField(Courier, null=True, on_delete="SET NULL", backref="+")
    created_at = UTCDateTimeField(default=now)
    updated_at = UTCDateTimeField()
    finished_at = UTCDateTimeField(null=True)
    # Raised by the database itself on every UPDATE (a trigger, migration 0009): what the orders
    # listing checks before it serves a kept answer. Whatever a save writes here is overwritten.
    revision = peewee.IntegerField(default=0)
    # Migration 0010 (issue 27): the shop's order number (unique per company where given, a partial
    # index made by the migration), the parts of an address a courier needs at the door, a note.
    external_ref = peewee.CharField(max_length=100, null=True)
    address_entrance = peewee.CharField(max_length=40, null=True)
    address_floor = peewee.CharField(max_length=40, null=True)
    address_apartment = peewee.CharField(max_length=40, null=True)
    address_intercom = peewee.CharField(max_length=40, null=True)
    note_to_courier = peewee.CharField(max_length=500, null=True)
    # Migration 0016 (issue 28): the language of messages to the recipient (hy, ru, en; the
    # company's default when NULL) and an address for e-mailed messages.
    recipient_language = peewee.CharField(max_length=2, null=True)
    recipient_email = peewee.CharField(max_length=320, null=True)
    # Migration 0022 (issue 45): the courier a picked-up order was handed over from, for the note
    # the new courier's app shows.
    handed_over_from = peewee.ForeignKeyField(Courier, null=True, on_delete="SET NULL", backref="+")
    # Migration 0015 (issue 28): a queued move the server refused, reported by the courier's app,
    # until the order moves on (needsAttention on the wire).
    attention_reason = peewee.CharField(max_length=500, null=True)
    attention_move = peewee.CharField(max_length=16, null=True)
    attention_held_amd = peewee.BigIntegerField(null=True)
    attention_at = UTCDateTimeField(null=True)
    # Migration 0029 (issue 46): an imported row whose address could not be placed, kept as a
    # draft at a stand-in pin (the company's depot) until a dispatcher drops the real one: why.
    pin_needed = peewee.CharField(max_length=300, null=True)
    # Migration 0031 (issue 47): the delivery fee charged to the shop, whole drams; NULL when no
    # fee rule applied.
    delivery_fee_amd = peewee.BigIntegerField(null=True)
    # Migration 0032 (issue 47): the proof this order's delivery needs (kinds comma-separated; NULL:
    # the company's setting decides) and the proof kinds beyond name, photo and code that a
    # delivery recorded.
    proof_required = peewee.CharField(max_length=64, null=True)
    proof_signature_key = peewee.CharField(max_length=500, null=True)
    proof_scanned_code = peewee.CharField(max_length=200, null=True)
    proof_age_checked = peewee.BooleanField(null=True)
    # Migration 0037 (issue 47): the integration key (the shop) that created or imported the order,
    # a plain id (its statement outlives a revoked key); NULL for a dispatcher's own orders.
    shop_key_id = peewee.BigIntegerField(null=True)
    # Migration 0034 (issue 47): the fiscal receipt's item lines (JSON, from the API, the import or
    # the shop's key; NULL: one goods line), the shop's TIN for a receipt issued as its agent, and
    # the printed receipt: its id, fiscal number, QR text and state (fiscal/service.py).
    fiscal_items = peewee.TextField(null=True)
    partner_tin = peewee.CharField(max_length=8, null=True)
    fiscal_receipt_id = peewee.CharField(max_length=64, null=True)
    fiscal_number = peewee.CharField(max_length=64, null=True)
    fiscal_qr = peewee.TextField(null=True)
    fiscal_state = peewee.CharField(max_length=16, null=True)

    class Meta:
        table_name = "order"
        indexes = (
            (("company", "created_at"), False),
            (("company", "status"), False),
            (("company", "finished_at"), False),
            (("company", "window_start"), False),
            (("courier", "status"), False),
        )


class OrderEvent(BaseModel):
    order = peewee.ForeignKeyField(Order, on_delete="RESTRICT")
    company = peewee.ForeignKeyField(Company, on_delete="RESTRICT")
    kind = peewee.CharField(max_length=32)
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16, null=True)
    actor = peewee.ForeignKeyField(User, null=True, on_delete="RESTRICT")
    # The courier holding the order when the event was written (not a foreign key: the audit trail
    # outlives whatever it names).
    courier_id = peewee.IntegerField(null=True)
    data = peewee.TextField(default="{}")
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "order_event"


class Assignment(BaseModel):
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    sequence = peewee.IntegerField(null=True)
    status = peewee.CharField(max_length=16)
    created_at = UTCDateTimeField(default=now)
    cancelled_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "assignment"
        indexes = ((("order", "status"), False), (("courier", "status"), False))


class RealtimeEvent(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    kind = peewee.CharField(max_length=48)
    payload = peewee.TextField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "realtime_event"
        indexes = ((("company", "id"), False),)


class Shift(BaseModel):
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    started_at = UTCDateTimeField()
    ended_at = UTCDateTimeField(null=True)
    on_break = peewee.BooleanField(default=False)
    ended_by = peewee.ForeignKeyField(User, null=True, on_delete="SET NULL")
    # 1 while the shift is open, NULL once ended: one open shift per courier.
    open_flag = peewee.IntegerField(null=True)

    class Meta:
        table_name = "shift"
        indexes = ((("courier", "open_flag"), True), (("courier", "started_at"), False))


class CourierLocation(BaseModel):
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    lat = peewee.DoubleField()
    lon = peewee.DoubleField()
    captured_at = UTCDateTimeField()
    accuracy_m = peewee.IntegerField(null=True)
    source = peewee.CharField(max_length=40, null=True)
    received_at = UTCDateTimeField()

    class Meta:
        table_name = "courier_location"
        indexes = ((("courier", "captured_at"), True),)


class StatusRequest(BaseModel):
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    key = peewee.CharField(max_length=128)
    request_hash = peewee.CharField(max_length=64)
    response = peewee.TextField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "status_request"
        indexes = ((("courier", "key"), True),)


class BulkRequest(BaseModel):
    """The answer of a POST /orders/bulk sent with an Idempotency-Key, kept so a retry with the
    same key and body replays it (and another body under the key is refused)."""

    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    key = peewee.CharField(max_length=128)
    request_hash = peewee.CharField(max_length=64)
    response = peewee.TextField()
    created_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "bulk_request"
        indexes = ((("company", "key"), True),)


class Collection(BaseModel):
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    courier = peewee.ForeignKeyField(Courier, on_delete="CASCADE")
    order = peewee.ForeignKeyField(Order, on_delete="CASCADE")
    amount_amd = peewee.BigIntegerField()
    collected_at = UTCDateTimeField()
    settlement = peewee.ForeignKeyField(Settlement, null=True, on_delete="SET NULL")

    class Meta:
        table_name = "collection"
        indexes = ((("courier", "settlement"), False),)
