"""Every order row carries a revision the database itself raises on every UPDATE (a trigger, so
no writer can forget it). A company's orders are fingerprinted by their count, the sum of their
revisions and the sum of their ids, read from an index alone: a kept listing is served only
while the fingerprint is unchanged (appliance/dispatch/orders/listing.py)."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "order" ADD COLUMN revision INTEGER NOT NULL DEFAULT 0')
    # Covers the fingerprint: the ids are in the index too (SQLite's rowid; PostgreSQL reads the
    # index with the row's visibility map, in an index-only scan when vacuumed).
    db.execute_sql('CREATE INDEX order_company_id_revision ON "order" (company_id, revision, id)')
    if is_postgres(db):
        db.execute_sql(
            "CREATE OR REPLACE FUNCTION order_next_revision() RETURNS trigger AS $$ "
            "BEGIN NEW.revision := OLD.revision + 1; RETURN NEW; END; $$ LANGUAGE plpgsql"
        )
        db.execute_sql(
            'CREATE TRIGGER order_revision BEFORE UPDATE ON "order" '
            "FOR EACH ROW EXECUTE FUNCTION order_next_revision()"
        )
    else:
        # SQLite does not run triggers recursively (recursive_triggers is off), so the trigger's
        # own UPDATE does not fire it again.
        db.execute_sql(
            'CREATE TRIGGER order_revision AFTER UPDATE ON "order" FOR EACH ROW '
            'BEGIN UPDATE "order" SET revision = old.revision + 1 WHERE id = new.id; END'
        )
