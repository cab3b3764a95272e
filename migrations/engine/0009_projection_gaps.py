"""Event ids a projection has passed without seeing (issue 29 item 13): on PostgreSQL an id is taken
at insert and an event may commit after a higher one, so the report projector remembers the ids
it found missing and applies each once it appears (or forgets it after a timeout: an id of a
transaction that rolled back never appears)."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class ProjectionGap(Frozen):
    name = peewee.CharField(max_length=32)
    event_id = peewee.BigIntegerField()
    seen_at = UTCDateTimeField()

    class Meta:
        table_name = "projection_gap"
        primary_key = peewee.CompositeKey("name", "event_id")


def up(db: peewee.Database) -> None:
    create_tables(db, ProjectionGap)
