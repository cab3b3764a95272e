"""The audit log of administrative acts (issue 48): hash-chained entries and the chain's anchor
(appliance/common/audit.py). Self-contained: it creates only its own tables."""

import peewee

from migrations.support import create_audit_log


def up(db: peewee.Database) -> None:
    create_audit_log(db)
