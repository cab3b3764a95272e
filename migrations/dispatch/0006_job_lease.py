"""Single-holder leases for background jobs that must not run twice at once (housekeeping)."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class JobLease(Frozen):
    name = peewee.CharField(max_length=32, primary_key=True)
    holder = peewee.CharField(max_length=64, null=True)
    lease_until = UTCDateTimeField(null=True)
    last_run_at = UTCDateTimeField(null=True)

    class Meta:
        table_name = "job_lease"


def up(db: peewee.Database) -> None:
    create_tables(db, JobLease)
