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


def create_audit_log(db: peewee.Database) -> None:
    """The audit log's two tables as both services first made them (dispatch 0028, engine 0025);
    frozen: a later change is a new migration, never an edit here. UPDATE is refused by the
    database; DELETE is left to retention (appliance/common/audit.py prune, which moves the anchor)."""

    class AuditEntry(Frozen):
        at = peewee.CharField(max_length=40, index=True)
        actor_kind = peewee.CharField(max_length=20)
        actor = peewee.CharField(max_length=200)
        company_id = peewee.BigIntegerField(null=True, index=True)
        action = peewee.CharField(max_length=80)
        subject = peewee.CharField(max_length=200)
        before = peewee.TextField(null=True)
        after = peewee.TextField(null=True)
        origin = peewee.CharField(max_length=200)
        previous_hash = peewee.CharField(max_length=64)
        hash = peewee.CharField(max_length=64)

        class Meta:
            table_name = "audit_entry"

    class AuditAnchor(Frozen):
        id = peewee.IntegerField(primary_key=True)
        hash = peewee.CharField(max_length=64)
        through_id = peewee.BigIntegerField()

        class Meta:
            table_name = "audit_anchor"

    create_tables(db, AuditEntry, AuditAnchor)
    if is_postgres(db):
        db.execute_sql(
            "CREATE OR REPLACE FUNCTION audit_entry_unchanged() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION 'audit_entry is append-only'; END; $$ LANGUAGE plpgsql"
        )
        db.execute_sql(
            "CREATE TRIGGER audit_entry_no_update BEFORE UPDATE ON audit_entry "
            "FOR EACH ROW EXECUTE FUNCTION audit_entry_unchanged()"
        )
    else:
        db.execute_sql(
            "CREATE TRIGGER audit_entry_no_update BEFORE UPDATE ON audit_entry "
            "BEGIN SELECT RAISE(ABORT, 'audit_entry is append-only'); END"
        )
