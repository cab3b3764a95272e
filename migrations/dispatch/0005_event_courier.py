"""The courier holding an order when an audit event was written (a dispatcher's fail belongs in
that courier's history). The audit trail is append-only, so rows written before stay NULL; the
courier's history still finds the moves the courier made themselves through the actor."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE order_event ADD COLUMN courier_id INTEGER NULL")
    db.execute_sql("CREATE INDEX order_event_courier ON order_event (courier_id, to_status)")
