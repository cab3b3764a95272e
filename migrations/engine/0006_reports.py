"""Report projections (one row per operator, report type, asset and UTC day), the projection's
cursor over the event log, export jobs and their snapshot rows."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class ReportRow(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    period = peewee.CharField(max_length=10)
    count = peewee.BigIntegerField()
    total_amount = peewee.CharField(max_length=90)
    total_fee = peewee.CharField(max_length=90)
    as_of = UTCDateTimeField()

    class Meta:
        table_name = "report_row"
        indexes = ((("operator", "report_type", "asset_code", "period"), True),)


class Projection(Frozen):
    name = peewee.CharField(max_length=32, primary_key=True)
    last_event_id = peewee.BigIntegerField(default=0)
    built_through = UTCDateTimeField(null=True)
    holder = peewee.CharField(max_length=64, null=True)
    lease_until = UTCDateTimeField(null=True)

    class Meta:
        table_name = "projection"


class ExportJob(Frozen):
    job_id = peewee.CharField(max_length=64)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    report_type = peewee.CharField(max_length=16)
    asset_code = peewee.CharField(max_length=16)
    from_time = UTCDateTimeField()
    to_time = UTCDateTimeField()
    request_hash = peewee.CharField(max_length=64)
    status = peewee.CharField(max_length=16)
    row_count = peewee.BigIntegerField(null=True)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UTCDateTimeField(null=True)
    lease_until = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField()
    completed_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "export_job"
        indexes = ((("operator", "job_id"), True), (("status", "next_attempt_at"), False))


class ExportRow(Frozen):
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


def up(db: peewee.Database) -> None:
    create_tables(db, ReportRow, Projection, ExportJob, ExportRow)
