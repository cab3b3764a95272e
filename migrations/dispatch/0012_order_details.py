"""What a courier needs beyond the pin (issue 27): the shop's own order number, the entrance,
floor, apartment and intercom, and a note to the courier. All optional, so every existing order
stays valid. A shop's order number names one order of its company: a partial unique index (only
where it is given), which is also what makes an import idempotent."""

import peewee


def up(db: peewee.Database) -> None:
    for column, size in (
        ("external_ref", 100),
        ("address_entrance", 40),
        ("address_floor", 40),
        ("address_apartment", 40),
        ("address_intercom", 40),
        ("note_to_courier", 500),
    ):
        db.execute_sql(f'ALTER TABLE "order" ADD COLUMN {column} VARCHAR({size})')
    db.execute_sql(
        'CREATE UNIQUE INDEX order_company_external_ref ON "order" (company_id, external_ref) '
        "WHERE external_ref IS NOT NULL"
    )
