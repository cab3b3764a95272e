"""An imported order whose address the index could not place (issue 46): kept as a draft that
needs a pin, with the reason, instead of a refused row. NULL for every order with a real pin; the
pin is cleared of it by PATCH /orders/{id} with a pin. One plain column on order."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "order" ADD COLUMN pin_needed VARCHAR(300)')
