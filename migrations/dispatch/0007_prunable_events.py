"""Realtime events stay append-only while they matter: UPDATE is refused always, DELETE only for rows
younger than a day, so that housekeeping can prune old ones (event_retention_days) and nothing
can erase what a dispatcher's stream may still replay."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    if is_postgres(db):
        db.execute_sql("DROP TRIGGER realtime_event_no_change ON realtime_event")
        db.execute_sql(
            "CREATE TRIGGER realtime_event_no_update BEFORE UPDATE ON realtime_event "
            "FOR EACH ROW EXECUTE FUNCTION realtime_event_append_only()"
        )
        db.execute_sql(
            "CREATE TRIGGER realtime_event_no_recent_delete BEFORE DELETE ON realtime_event FOR EACH ROW "
            "WHEN (OLD.created_at > now() AT TIME ZONE 'UTC' - interval '1 day') "
            "EXECUTE FUNCTION realtime_event_append_only()"
        )
    else:
        db.execute_sql("DROP TRIGGER realtime_event_no_delete")
        db.execute_sql(
            "CREATE TRIGGER realtime_event_no_recent_delete BEFORE DELETE ON realtime_event "
            "WHEN old.created_at > strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 day') "
            "BEGIN SELECT RAISE(ABORT, 'realtime_event is append-only'); END"
        )
