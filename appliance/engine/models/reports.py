"""Report projections (their rows, cursor and gaps) and export jobs with their snapshots."""

from __future__ import annotations

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField
from appliance.engine.models.base import BaseModel
from appliance.engine.models.operators import Operator


class ReportRow(BaseModel):
    """One projection row: an operator's totals of one report type for one asset and UTC day.
    Totals are decimal strings (sums of amounts up to 39 digits exceed every integer column)."""

    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    period = peewee.CharField(max_length=10)  # YYYY-MM-DD (UTC), or "all" for SUMMARY
    count = peewee.BigIntegerField()
    total_amount = peewee.CharField(max_length=90)
    total_fee = peewee.CharField(max_length=90)
    as_of = UTCDateTimeField(default=now)

    class Meta:
        table_name = "report_row"


class Projection(BaseModel):
    """A projection's cursor over the event log (webhook_event ids) and its single-holder lease."""

    name = peewee.CharField(max_length=32, primary_key=True)
    last_event_id = peewee.BigIntegerField(default=0)
    built_through = UTCDateTimeField(null=True)
    holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    lease_until = UTCDateTimeField(null=True)

    class Meta:
        table_name = "projection"


class ProjectionGap(BaseModel):
    """An event id below a projection's cursor that was not visible when the cursor passed it (on
    PostgreSQL ids are taken at insert, not commit): applied once it appears, dropped after
    a timeout (a rolled-back transaction's id never appears)."""

    name = peewee.CharField(max_length=32)
    event_id = peewee.BigIntegerField()
    seen_at = UTCDateTimeField()

    class Meta:
        table_name = "projection_gap"
        primary_key = peewee.CompositeKey("name", "event_id")


class ExportJob(BaseModel):
    job_id = peewee.CharField(max_length=64)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    from_time = UTCDateTimeField()
    to_time = UTCDateTimeField()
    request_hash = peewee.CharField(max_length=64)
    status = peewee.CharField(max_length=16, default="PENDING")  # PENDING, COMPLETE, FAILED
    row_count = peewee.BigIntegerField(null=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    lease_holder = peewee.CharField(max_length=200, null=True)  # common/holders.py
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField(default=now)
    completed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "export_job"


class ExportRow(BaseModel):
    """A completed job's snapshot: every download streams exactly these rows, in seq order."""

    job = peewee.ForeignKeyField(ExportJob, on_delete="CASCADE")
    seq = peewee.BigIntegerField()
    period = peewee.CharField(max_length=10)
    asset_code = peewee.CharField(max_length=16)
    count = peewee.BigIntegerField()
    total_amount = peewee.CharField(max_length=90)
    total_fee = peewee.CharField(max_length=90)
    as_of = peewee.CharField(max_length=32)  # the wire form, fixed at the snapshot

    class Meta:
        table_name = "export_row"
        primary_key = peewee.CompositeKey("job", "seq")
