"""The delivery fee the company charges the shop for an order (issue 47), in whole drams: set from
the company's fee rules at creation and import, editable by a dispatcher. NULL: no fee worked out
(no rule applied, or the order predates fees). One plain column on order."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql('ALTER TABLE "order" ADD COLUMN delivery_fee_amd BIGINT')
