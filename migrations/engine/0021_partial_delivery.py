"""Partial delivery is a state, not a failure (issue 44, item 6): a token payout whose transfer
succeeded but delivered less (a fee-on-transfer token) is COMPLETED_SHORT, with what reached the
destination (delivered_minor) and what left the payout wallet and was debited (debited_minor)."""

import peewee


def up(db: peewee.Database) -> None:
    for column in ("delivered_minor", "debited_minor"):
        db.execute_sql(f"ALTER TABLE payout ADD COLUMN {column} VARCHAR(78) NULL")
