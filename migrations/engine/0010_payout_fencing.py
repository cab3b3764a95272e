"""Nonce fencing of the payout pipeline (issue 29): a wallet whose chain nonce the engine cannot
account for stops signing with a reason; the block up to which its nonces were verified bounds the
scan of its transactions; each reservation remembers the head it was signed at."""

import peewee


def up(db: peewee.Database) -> None:
    for table, column, kind in (
        ("wallet", "fence_reason", "TEXT NULL"),
        ("wallet", "verified_block", "BIGINT NULL"),
        ("broadcast", "signed_block", "BIGINT NULL"),
    ):
        db.execute_sql(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
