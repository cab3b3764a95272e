"""Mail already handed over keeps no link tokens (issue 33): the body of every sent message gets
``{token}`` in place of each link's token, as appliance/common/mail.py does from now on for each
message it sends. A frozen copy of its redaction, so that this migration never changes."""

import re

import peewee

_URL = re.compile(r"(https?://[^/\s?#]+)([^\s<>\"']*)")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,}")


def _redact(body: str) -> str:
    return _URL.sub(lambda m: m.group(1) + _TOKEN.sub("{token}", m.group(2)), body)


def up(db: peewee.Database) -> None:
    update = f"UPDATE outgoing_mail SET body = {db.param} WHERE id = {db.param}"
    rows = db.execute_sql("SELECT id, body FROM outgoing_mail WHERE status = 'sent'").fetchall()
    for row_id, body in rows:
        redacted = _redact(body)
        if redacted != body:
            db.execute_sql(update, (redacted, row_id))
