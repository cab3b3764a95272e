"""The rolling approval threshold (issue 41, item 12): per operator and asset, once its payouts
submitted within a window (24 h unless set) pass a sum, each further one waits for an
administrator's approval, like one above the per-payout threshold. Two nullable columns of
operator_limit, and the admitted payouts of operators that have the threshold with their running
total, on the index the admission's two seeks read (the payout table gains no index: every other
admission stays as it was)."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class Payout(Frozen):
    class Meta:
        table_name = "payout"


class PayoutApprovalWindow(Frozen):
    payout = peewee.ForeignKeyField(Payout, unique=True, on_delete="RESTRICT")
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=39)
    cumulative_minor = peewee.CharField(max_length=80)
    window_sum_minor = peewee.CharField(max_length=80)
    approval_due = peewee.BooleanField()
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "payout_approval_window"
        indexes = ((("operator", "chain_id", "asset_code", "created_at"), False),)


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE operator_limit ADD COLUMN approval_rolling_minor VARCHAR(80) NULL")
    db.execute_sql("ALTER TABLE operator_limit ADD COLUMN approval_window_hours INTEGER NULL")
    create_tables(db, PayoutApprovalWindow)
