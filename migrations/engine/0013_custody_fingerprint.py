"""The deployment's custody key fingerprint (issue 31, item 5): recorded once, at the first use of a
key, so that a node holding another key refuses to derive addresses or sign instead of handing out
addresses of another seed into the shared database. One row at most (id 1)."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class CustodyFingerprint(Frozen):
    id = peewee.IntegerField(primary_key=True)
    fingerprint = peewee.CharField(max_length=16)
    recorded_at = UTCDateTimeField()

    class Meta:
        table_name = "custody_fingerprint"


def up(db: peewee.Database) -> None:
    create_tables(db, CustodyFingerprint)
