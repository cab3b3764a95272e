"""Helpers for migrations: create frozen models on the database being migrated."""

from __future__ import annotations

import peewee


class Frozen(peewee.Model):
    """Base of the model copies inside migrations; bound to the database only while migrating."""

    class Meta:
        legacy_table_names = False


def create_tables(db: peewee.Database, *models: type[peewee.Model]) -> None:
    with db.bind_ctx(models):
        db.create_tables(models, safe=False)


def is_postgres(db: peewee.Database) -> bool:
    return isinstance(db, peewee.PostgresqlDatabase)


def forbid_changes(db: peewee.Database, table: str) -> None:
    """Make a table append-only: the database itself refuses UPDATE and DELETE."""
    if is_postgres(db):
        db.execute_sql(
            f"CREATE OR REPLACE FUNCTION {table}_append_only() RETURNS trigger AS $$ "
            f"BEGIN RAISE EXCEPTION '{table} is append-only'; END; $$ LANGUAGE plpgsql"
        )
        db.execute_sql(
            f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_append_only()"
        )
    else:
        for action in ("UPDATE", "DELETE"):
            db.execute_sql(
                f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )
