"""Proof requirements (issue 47): what a delivery must carry (photo, signature, code, scan, name,
age), set per company, per integration key (the default of that key's orders) and per order; and
the new kinds of proof a delivery records (the signature's object key, the scanned value, the age
check). The key an order came in through is order.shop_key_id (migration 0037), which a shop's
proof download reads too.

Requirements rest as a comma-separated set of kind names in a fixed order (""
none); NULL on an order or key: not set there, the next level decides. Plain nullable columns."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE company ADD COLUMN proof_required VARCHAR(64) NOT NULL DEFAULT ''")
    db.execute_sql("ALTER TABLE integration_key ADD COLUMN proof_required VARCHAR(64)")
    db.execute_sql('ALTER TABLE "order" ADD COLUMN proof_required VARCHAR(64)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN proof_signature_key VARCHAR(500)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN proof_scanned_code VARCHAR(200)')
    db.execute_sql('ALTER TABLE "order" ADD COLUMN proof_age_checked BOOLEAN')
