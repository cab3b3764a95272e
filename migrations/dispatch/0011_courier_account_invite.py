"""A courier made by a dispatcher (POST /couriers) is a profile waiting for its account: the
invite mailed to the courier's address names the profile, and accepting it attaches the account
that proved the mailbox (docs/identity.md). Self-contained: one nullable column."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql(
        "ALTER TABLE link_token ADD COLUMN courier_id INTEGER NULL REFERENCES courier (id) ON DELETE CASCADE"
    )
    db.execute_sql("CREATE INDEX link_token_courier_id ON link_token (courier_id)")
