"""Tracking links in one place (issue 45): how one is issued and when one is live.

Two callers issue links: the dispatcher (`POST /orders/{id}/tracking` and the late notice, which
end the links before) and the recipient messages (which keep the others: a link the dispatcher
read out by phone keeps working). Four readers ask whether a link is live: the tracking page, the
served copies of its views (`kept.py`), the console's "link in force" and the messages reusing the
link they sent. Each goes through `issue` and `is_live` (or `live`, the same rule as a query), so a
link never counts as live in one place and ended in another.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import peewee
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.common import clock
from appliance.common.keys import subkey
from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.models import Order, TrackingLink

PURPOSE = "tracking-link-display"


def is_live(revoked_at: datetime | None, expires_at: datetime | None, *, at: datetime | None = None,
            margin: timedelta = timedelta(0)) -> bool:  # fmt: skip
    """Not revoked and not expired at ``at`` (now by default), with ``margin`` to spare: a link about
    to expire is no link to send in a message."""
    moment = clock.now() if at is None else at
    return revoked_at is None and expires_at is not None and expires_at > moment + margin


def live(at: datetime | None = None) -> peewee.Expression:
    """`is_live` as a query's condition on tracking_link rows."""
    moment = clock.now() if at is None else at
    return TrackingLink.revoked_at.is_null() & (TrackingLink.expires_at > moment)


def seal(master_key: bytes, order_id: int, token: str) -> bytes:
    """The token encrypted (AES-GCM, bound to its order), so the console can show the link in force
    rather than issue a new one, which would end the link the recipient already has."""
    nonce = os.urandom(12)
    return nonce + AESGCM(subkey(master_key, PURPOSE)).encrypt(nonce, token.encode(), str(order_id).encode())


def unseal(master_key: bytes, order_id: int, blob: bytes) -> str:
    blob = bytes(blob)
    return AESGCM(subkey(master_key, PURPOSE)).decrypt(blob[:12], blob[12:], str(order_id).encode()).decode()


@dataclass(frozen=True)
class Issued:
    link: TrackingLink
    token: str
    path: str
    url: str

    def answer(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "path": self.path,
            "url": self.url,
            "expiresAt": clock.iso(self.link.expires_at),
        }


def issue(master_key: bytes, public_url: str, order: Order, ttl_hours: int, *, revoke_others: bool) -> Issued:
    """A new link for the order (call inside a write transaction): 192 random bits, kept as a hash
    to find it and sealed to show it again; ``revoke_others`` ends the order's links in force."""
    moment = clock.now()
    if revoke_others:
        TrackingLink.update(revoked_at=moment).where(
            (TrackingLink.order == order.id) & TrackingLink.revoked_at.is_null()
        ).execute()
    token = secrets.token_urlsafe(24)
    link = TrackingLink.create(
        company=order.company_id,
        order=order.id,
        token_hash=token_hash(token),
        token_cipher=seal(master_key, order.id, token),
        created_at=moment,
        expires_at=moment + timedelta(hours=ttl_hours),
    )
    path = f"/t/{token}"
    return Issued(link=link, token=token, path=path, url=public_url + path)
