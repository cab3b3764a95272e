"""The engine's model base: every table in engine.db (created by migrations/engine)."""

from __future__ import annotations

import peewee

from appliance.engine.db import database


class BaseModel(peewee.Model):
    class Meta:
        database = database
        legacy_table_names = False
