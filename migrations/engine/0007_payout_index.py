"""Drop payout(operator_id): the unique (operator_id, idempotency_key) index begins with the same
column and serves every lookup by operator, and each payout written paid for one more index page."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql('DROP INDEX IF EXISTS "payout_operator_id"')
