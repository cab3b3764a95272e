"""Leases name their holder's process (appliance/common/holders.py: host, pid and start time), so
that a process of the same host takes over at once the leases of a holder that no longer runs (a
restart after kill -9). The row leases of the payout pipeline, the webhook sender and the export
worker get a lease_holder column; the single-holder leases (deposit watcher, report projection)
keep theirs in holder, widened for the longer name (SQLite does not enforce a VARCHAR length)."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    for table in ("payout", "webhook_delivery", "export_job"):
        db.execute_sql(f'ALTER TABLE "{table}" ADD COLUMN lease_holder VARCHAR(200)')
    if is_postgres(db):
        for table in ("chain_cursor", "projection"):
            db.execute_sql(f'ALTER TABLE "{table}" ALTER COLUMN holder TYPE VARCHAR(200)')
