"""Company-set courier passwords (issue 40): a dispatcher's POST /couriers password kept as a
credential that signs in only to that company's courier membership, and the session column that
scopes a session opened with one (docs/identity.md). Self-contained: a frozen copy of the table
and one nullable column."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Company(Frozen):
    class Meta:
        table_name = "company"


class User(Frozen):
    class Meta:
        table_name = "user"


class CompanyCredential(Frozen):
    user = peewee.ForeignKeyField(User, on_delete="CASCADE")
    company = peewee.ForeignKeyField(Company, on_delete="CASCADE")
    email = peewee.CharField(max_length=320, index=True)
    password_hash = peewee.CharField(max_length=200)
    set_by = peewee.ForeignKeyField(User, null=True, backref="+", on_delete="SET NULL")
    created_at = UTCDateTimeField()
    revoked_at = UTCDateTimeField(null=True)
    revoked_reason = peewee.CharField(max_length=40, null=True)

    class Meta:
        table_name = "company_credential"


def up(db: peewee.Database) -> None:
    create_tables(db, CompanyCredential)
    db.execute_sql(
        "ALTER TABLE auth_session ADD COLUMN credential_id INTEGER NULL "
        "REFERENCES company_credential (id) ON DELETE CASCADE"
    )
    db.execute_sql("CREATE INDEX auth_session_credential_id ON auth_session (credential_id)")
