"""Scheduled backups and their restore drills (issue 48): one row per backup run and one per drill,
kept in the dispatch database so that every node of a deployment sees the same history (health's
``backups`` check, the metrics). Trimmed to backup_history_kept rows each."""

import peewee

from appliance.common.db import UTCDateTimeField
from migrations.support import Frozen, create_tables


class BackupRun(Frozen):
    name = peewee.CharField(max_length=64)
    started_at = UTCDateTimeField()
    finished_at = UTCDateTimeField()
    passed = peewee.BooleanField()
    destinations = peewee.CharField(max_length=500)
    bytes = peewee.BigIntegerField(default=0)
    seconds = peewee.FloatField(default=0)
    error = peewee.TextField(null=True)

    class Meta:
        table_name = "backup_run"
        indexes = ((("finished_at",), False),)


class BackupDrill(Frozen):
    backup = peewee.CharField(max_length=64)
    destination = peewee.CharField(max_length=500)
    drilled_at = UTCDateTimeField()
    passed = peewee.BooleanField()
    seconds = peewee.FloatField(default=0)
    detail = peewee.TextField()
    gone = peewee.BooleanField(default=False)  # the backup is no longer in that destination

    class Meta:
        table_name = "backup_drill"
        indexes = ((("drilled_at",), False), (("backup", "destination"), False))


def up(db: peewee.Database) -> None:
    create_tables(db, BackupRun, BackupDrill)
