"""Books that balance against the chain alone (issue 44, items 7, 10 and 11).

- ``treasury_flow_cursor``: per chain, the next block whose transfers the reconciler reads (a
  cursor: each run reads the blocks since the last, never the whole history);
- ``treasury_flow_checkpoint``: per custody wallet and asset, its balance at the block the flows
  were last counted to (the next run's expected balance starts there);
- ``treasury_allowance``: (owner, spender) pairs of custody wallets seen in Approval logs, read
  with ``allowance()`` on every run while non-zero;
- ``treasury_nonce_cursor``: per custody address, the nonces below which the reconciler found
  every used nonce accounted for (a run reads the broadcasts from there on);
- ``treasury_movement``: the sweeps' and top-ups' changes to deposit addresses' balances once
  final, folded in by a cursor over broadcast transitions (``treasury_flow_cursor.movements_from``);
- ``deployment_ledger_entry`` / ``deployment_ledger_account``: the deployment's own ledger
  account per asset: sweep fees and other costs that belong to no operator;
- ``operator_limit.exposure_ceiling_minor``: the most an ``unlimited`` operator may pay out beyond
  what it was credited (null: no ceiling);
- an index of deposits by (chain_id, confirmed_at): the sweep planner's cursor;
- a 'final' ``broadcast_transition`` for each reservation made final before transitions were
  recorded (migration 0017), which the fold reads."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class TreasuryFlowCursor(Frozen):
    chain_id = peewee.CharField(max_length=32, primary_key=True)
    next_block = peewee.BigIntegerField(null=True)
    movements_from = peewee.BigIntegerField(default=0)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "treasury_flow_cursor"


class TreasuryFlowCheckpoint(Frozen):
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    asset_code = peewee.CharField(max_length=16)
    block = peewee.BigIntegerField()
    balance_minor = peewee.CharField(max_length=90)

    class Meta:
        table_name = "treasury_flow_checkpoint"
        primary_key = peewee.CompositeKey("chain_id", "address", "asset_code")


class TreasuryAllowance(Frozen):
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    owner = peewee.CharField(max_length=42)
    spender = peewee.CharField(max_length=42)
    tx_hash = peewee.CharField(max_length=66)
    block = peewee.BigIntegerField()

    class Meta:
        table_name = "treasury_allowance"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "owner", "spender")


class TreasuryNonceCursor(Frozen):
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    checked_below = peewee.BigIntegerField()

    class Meta:
        table_name = "treasury_nonce_cursor"
        primary_key = peewee.CompositeKey("chain_id", "address")


class TreasuryMovement(Frozen):
    chain_id = peewee.CharField(max_length=32)
    address = peewee.CharField(max_length=42)
    asset_code = peewee.CharField(max_length=16)
    change_minor = peewee.CharField(max_length=90)

    class Meta:
        table_name = "treasury_movement"
        primary_key = peewee.CompositeKey("chain_id", "address", "asset_code")


class DeploymentLedgerEntry(Frozen):
    journal = peewee.CharField(max_length=40)
    kind = peewee.CharField(max_length=32)
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    amount_minor = peewee.CharField(max_length=90)
    ref = peewee.CharField(max_length=80)
    memo = peewee.CharField(max_length=500, null=True)
    created_at = UTCDateTimeField()

    class Meta:
        table_name = "deployment_ledger_entry"
        indexes = ((("ref", "account"), True),)


class DeploymentLedgerAccount(Frozen):
    chain_id = peewee.CharField(max_length=32)
    asset_code = peewee.CharField(max_length=16)
    account = peewee.CharField(max_length=16)
    balance_minor = peewee.CharField(max_length=90)
    updated_at = UTCDateTimeField()

    class Meta:
        table_name = "deployment_ledger_account"
        primary_key = peewee.CompositeKey("chain_id", "asset_code", "account")


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE operator_limit ADD COLUMN exposure_ceiling_minor VARCHAR(80) NULL")
    # The sweep planner reads the deposits confirmed since its last look (sweeps/planning.py).
    db.execute_sql("CREATE INDEX deposit_chain_id_confirmed_at ON deposit (chain_id, confirmed_at)")
    # Reservations made final before migration 0017 recorded transitions have no 'final' row: the
    # movements' fold reads final reservations by their transition, so each gets one (dated when
    # it was last updated).
    db.execute_sql(
        "INSERT INTO broadcast_transition (broadcast_id, from_status, to_status, occurred_at) "
        "SELECT b.id, NULL, 'final', b.updated_at FROM broadcast b WHERE b.status = 'final' AND NOT EXISTS "
        "(SELECT 1 FROM broadcast_transition t WHERE t.broadcast_id = b.id AND t.to_status = 'final')"
    )
    create_tables(
        db,
        TreasuryFlowCursor,
        TreasuryFlowCheckpoint,
        TreasuryAllowance,
        TreasuryNonceCursor,
        TreasuryMovement,
        DeploymentLedgerEntry,
        DeploymentLedgerAccount,
    )
