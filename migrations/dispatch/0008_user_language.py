"""Each user's language (hy, ru, en): the e-mails they get and the screens they see."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE \"user\" ADD COLUMN language VARCHAR(2) NOT NULL DEFAULT 'hy'")
