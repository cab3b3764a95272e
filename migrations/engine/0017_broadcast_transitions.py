"""Every move of a broadcast's status (signed, sent, mined, final, back to signed after a reorg)
is recorded, as a payout's are (issue 42): one row per move, written in the transaction of the
move. Self-contained: one new table."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class Broadcast(Frozen):
    class Meta:
        table_name = "broadcast"


class BroadcastTransition(Frozen):
    broadcast = peewee.ForeignKeyField(Broadcast, on_delete="RESTRICT")
    from_status = peewee.CharField(max_length=16, null=True)
    to_status = peewee.CharField(max_length=16)
    occurred_at = UTCDateTimeField()

    class Meta:
        table_name = "broadcast_transition"


def up(db: peewee.Database) -> None:
    create_tables(db, BroadcastTransition)
