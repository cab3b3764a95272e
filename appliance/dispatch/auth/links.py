"""Single-use link tokens: long random values shown once, stored as SHA-256 hashes."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.models import LinkToken

MAGIC_LIFETIME = timedelta(minutes=15)
INVITE_LIFETIME = timedelta(days=7)
LOGIN_LINK_LIFETIME = timedelta(hours=24)
PASSWORD_LINK_LIFETIME = timedelta(hours=1)


def issue(kind: str, lifetime: timedelta, **fields: Any) -> tuple[str, LinkToken]:
    token = secrets.token_urlsafe(32)
    moment = clock.now()
    row = LinkToken.create(
        kind=kind, token_hash=token_hash(token), created_at=moment, expires_at=moment + lifetime, **fields
    )
    return token, row


def find(token: str, kinds: tuple[str, ...]) -> LinkToken | None:
    return LinkToken.get_or_none((LinkToken.token_hash == token_hash(token)) & (LinkToken.kind.in_(kinds)))


def state(row: LinkToken) -> str:
    """usable, used, expired or revoked."""
    if row.revoked_at is not None:
        return "revoked"
    if row.used_at is not None:
        return "used"
    if row.expires_at <= clock.now():
        return "expired"
    return "usable"


def consume(row: LinkToken) -> bool:
    """Mark used once; False when another request used it first."""
    updated = (
        LinkToken.update(used_at=clock.now())
        .where((LinkToken.id == row.id) & LinkToken.used_at.is_null() & LinkToken.revoked_at.is_null())
        .execute()
    )
    return updated == 1
