"""Sessions expire on the server (issue 41): auth_session.expires_at, the end of the session's
current refresh token (moved on at each rotation, never past the absolute session lifetime). The
guards accept an access token only while its session is unrevoked and unexpired, so a token signed
with a leaked appliance.key no longer opens a session nobody has refreshed. Rows of before take the
expiry of their unrotated refresh token; a session without one has none and counts as ended."""

import peewee

from migrations.support import is_postgres


def up(db: peewee.Database) -> None:
    kind = "TIMESTAMP" if is_postgres(db) else "DATETIME"
    db.execute_sql(f'ALTER TABLE "auth_session" ADD COLUMN expires_at {kind}')
    db.execute_sql(
        'UPDATE "auth_session" SET expires_at = (SELECT max(r.expires_at) FROM "refresh_token" r '
        'WHERE r.session_id = "auth_session".id AND r.rotated_at IS NULL)'
    )
