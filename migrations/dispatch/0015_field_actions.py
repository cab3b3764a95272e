"""The console and the courier app in the field (issue 28, items 2 and 3).

- An order a courier's app could not move (a queued move the server refused: a wrong or locked
  code typed without signal, a move no longer allowed) is flagged "needs attention" with the
  reason, the move the courier made and the cash the courier holds for it, until the order
  moves on. All NULL: no existing order needs attention.
- A tracking link's token is kept encrypted (as a delivery code is), so that the console can show
  the link in force instead of issuing a new one, which ends the recipient's. Links issued before
  keep only their hash (NULL here): the console says that one is in force but cannot show it.
"""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    for column, kind in (
        ("attention_reason", "VARCHAR(500)"),
        ("attention_move", "VARCHAR(16)"),
        ("attention_held_amd", "BIGINT"),
        ("attention_at", "TIMESTAMP" if is_postgres(db) else "DATETIME"),
    ):
        db.execute_sql(f'ALTER TABLE "order" ADD COLUMN {column} {kind}')
    db.execute_sql(
        f"ALTER TABLE tracking_link ADD COLUMN token_cipher {'BYTEA' if is_postgres(db) else 'BLOB'}"
    )
