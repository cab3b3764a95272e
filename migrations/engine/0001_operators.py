"""Operators and their (encrypted) secrets."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Operator(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)
    created_at = UTCDateTimeField()


class OperatorSecret(Frozen):
    id = peewee.CharField(max_length=64, primary_key=True)
    operator = peewee.ForeignKeyField(Operator, on_delete="CASCADE")
    # The secret encrypted (AES-GCM) under a key kept outside the database.
    ciphertext = peewee.BlobField()
    created_at = UTCDateTimeField()


def up(db: peewee.Database) -> None:
    create_tables(db, Operator, OperatorSecret)
