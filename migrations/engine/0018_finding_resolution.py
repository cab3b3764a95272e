"""A reconciliation finding the chain later explains (issue 44, item 9: an unknown outflow raised
while a node lagged, the nonce then seen used by the engine's own transaction) is resolved by the
reconciler with its reason, and kept: resolved_at and resolution beside the administrator's
acknowledged_at and acknowledged_by."""

import peewee


def up(db: peewee.Database) -> None:
    for column, kind in (("resolved_at", "TIMESTAMP NULL"), ("resolution", "TEXT NULL")):
        db.execute_sql(f"ALTER TABLE treasury_finding ADD COLUMN {column} {kind}")
