"""The per-operator ledger and spending controls (issue 31, items 1 and 4): an append-only journal
of double entries, each account's running balance (the row locked by whoever posts to it), each
operator's ledger mode and pause, per-asset limits, a destination allow-list and administrators'
decisions on payouts above an approval threshold. Self-contained: only new tables."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables, forbid_changes


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)

    class Meta:
        table_name = "operator"


class Payout(Frozen):
    class Meta:
        table_name = "payout"


class LedgerEntry(Frozen):
    journal = peewee.CharField(max_length=40)
    kind = peewee.CharField(max_length=32)
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=80)
    ref = peewee.CharField(max_length=80, null=True)
    memo = peewee.CharField(max_length=500, null=True)
    actor = peewee.CharField(max_length=200, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "ledger_entry"
        indexes = (
            (("operator", "chain_id", "asset_code", "kind", "created_at"), False),
            (("ref", "kind"), False),
            (("journal",), False),
        )


class LedgerAccount(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    balance_minor = peewee.CharField(max_length=80)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "ledger_account"
        indexes = ((("operator", "chain_id", "asset_code", "account"), True),)


class OperatorControl(Frozen):
    operator = peewee.ForeignKeyField(Operator, primary_key=True, on_delete="RESTRICT")
    ledger_mode = peewee.CharField(max_length=16)
    paused = peewee.BooleanField()
    paused_by = peewee.CharField(max_length=200, null=True)
    paused_at = UTCDateTimeField(null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "operator_control"


class OperatorLimit(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    max_payout_minor = peewee.CharField(max_length=80, null=True)
    daily_volume_minor = peewee.CharField(max_length=80, null=True)
    approval_above_minor = peewee.CharField(max_length=80, null=True)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "operator_limit"
        indexes = ((("operator", "chain_id", "asset_code"), True),)


class OperatorDestination(Frozen):
    operator = peewee.ForeignKeyField(Operator, on_delete="RESTRICT")
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "operator_destination"
        indexes = ((("operator", "chain_id", "address"), True),)


class PayoutApproval(Frozen):
    payout = peewee.ForeignKeyField(Payout, unique=True, on_delete="RESTRICT")
    decision = peewee.CharField(max_length=16)
    decided_by = peewee.CharField(max_length=200)
    decided_at = UTCDateTimeField()

    class Meta:
        table_name = "payout_approval"


def up(db: peewee.Database) -> None:
    create_tables(
        db, LedgerEntry, LedgerAccount, OperatorControl, OperatorLimit, OperatorDestination, PayoutApproval
    )
    forbid_changes(db, "ledger_entry")
    forbid_changes(db, "payout_approval")
