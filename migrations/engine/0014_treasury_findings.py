"""Treasury and reconciliation (issue 31 item 3): the findings of the last reconciliation (an
unknown outflow stays until an administrator acknowledges it), the custody wallets' balances it
read (for /metrics) and the reconcile job's single-holder lease. Self-contained: it creates only
its own tables."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class TreasuryFinding(Frozen):
    key = peewee.CharField(max_length=255, unique=True)
    kind = peewee.CharField(max_length=32)
    critical = peewee.BooleanField()
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    expected_minor = peewee.CharField(max_length=90)
    actual_minor = peewee.CharField(max_length=90)
    detail = peewee.TextField()
    sticky = peewee.BooleanField(default=False)
    first_seen_at = UTCDateTimeField()
    last_seen_at = UTCDateTimeField()
    acknowledged_at = UTCDateTimeField(null=True)
    acknowledged_by = peewee.CharField(max_length=200, null=True)

    class Meta:
        table_name = "treasury_finding"


class TreasuryBalance(Frozen):
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    role = peewee.CharField(max_length=16)
    address = peewee.CharField(max_length=42)
    on_chain_minor = peewee.CharField(max_length=90)
    expected_minor = peewee.CharField(max_length=90)
    low_balance = peewee.BooleanField(default=False)
    checked_at = UTCDateTimeField()

    class Meta:
        table_name = "treasury_balance"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "role", "address")


class TreasuryRun(Frozen):
    name = peewee.CharField(max_length=32, primary_key=True)
    holder = peewee.CharField(max_length=200, null=True)
    lease_until = UTCDateTimeField(null=True)
    checked_at = UTCDateTimeField(null=True)
    next_run_at = UTCDateTimeField(null=True)
    last_error = peewee.CharField(max_length=500, null=True)

    class Meta:
        table_name = "treasury_run"


def up(db: peewee.Database) -> None:
    create_tables(db, TreasuryFinding, TreasuryBalance, TreasuryRun)
