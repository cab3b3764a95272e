"""Queued mail keeps no raw link tokens, and a request never sends (issue 41).

- ``link_tokens``: from the moment a message is queued its body holds ``{token}`` in place of each
  link's token, and the tokens rest here, sealed (AES-GCM under the ``mail-link-tokens`` subkey of
  appliance.key, bound to the row); the sender rebuilds the links from them and drops them once
  the message is handed over. Rows queued before this migration keep their body as it was (a
  migration has no key to seal with) and are redacted when sent, as before.
- ``compose``: a message queued by address only (a sign-in or password link asked for), which the
  mail worker composes when the account exists and deletes otherwise.

Self-contained: two nullable columns."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    blob = "BYTEA" if is_postgres(db) else "BLOB"
    db.execute_sql(f"ALTER TABLE outgoing_mail ADD COLUMN link_tokens {blob} NULL")
    db.execute_sql("ALTER TABLE outgoing_mail ADD COLUMN compose VARCHAR(32) NULL")
