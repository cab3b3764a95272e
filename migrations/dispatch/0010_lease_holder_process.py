"""Leases name their holder's process (appliance/common/holders.py: host, pid and start time), so
that a process of the same host takes over at once the leases of a holder that no longer runs (a
restart after kill -9). The mail queue's rows get a lease_holder column; the housekeeping lease
keeps its holder in job_lease.holder, widened for the longer name (SQLite does not enforce a
VARCHAR length)."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "outgoing_mail" ADD COLUMN lease_holder VARCHAR(200)')
    if is_postgres(db):
        db.execute_sql('ALTER TABLE "job_lease" ALTER COLUMN holder TYPE VARCHAR(200)')
