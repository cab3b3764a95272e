"""What new orders arrive as (issue 45): imported rows ready by default (each has its pin and
phone, as POST /orders requires), a shop's integration-key orders ready when the company opts in.
Two plain columns on company."""

import peewee


def up(db: peewee.Database) -> None:
    db.execute_sql("ALTER TABLE company ADD COLUMN import_status VARCHAR(8) NOT NULL DEFAULT 'ready'")
    db.execute_sql("ALTER TABLE company ADD COLUMN integration_orders_ready BOOLEAN NOT NULL DEFAULT FALSE")
