"""Starting a sign-in session: an AuthSession row, its first refresh token (stored as a SHA-256
hash) and a short-lived access token. Rotation and revocation build on the same rows."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from datetime import datetime, timedelta
from typing import cast

from appliance.common import clock
from appliance.dispatch.auth.tokens import AccessClaims, issue_access_token
from appliance.dispatch.models import AuthSession, Membership, RefreshToken
from appliance.settings import Settings


@dataclasses.dataclass(frozen=True)
class IssuedTokens:
    access_token: str
    refresh_token: str
    expires_in: int
    session_id: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def session_expiry(session: AuthSession, settings: Settings) -> datetime:
    """When a session issued a refresh token now ends: the token's lifetime from now, never past
    ``session_max_days`` after the sign-in (0: no absolute limit)."""
    expiry = clock.now() + timedelta(days=settings.refresh_token_days)
    if settings.session_max_days > 0:
        signed_in = cast(datetime, session.created_at)
        absolute = signed_in + timedelta(days=settings.session_max_days)
        expiry = min(expiry, absolute)
    return expiry


def new_refresh_token(session: AuthSession, settings: Settings) -> str:
    """A new refresh token of ``session``; the session's server-side expiry moves with it (the
    guards refuse access tokens of a session past it, however well signed)."""
    token = secrets.token_urlsafe(32)
    expiry = session_expiry(session, settings)
    RefreshToken.create(
        session=session,
        token_hash=token_hash(token),
        issued_at=clock.now(),
        expires_at=expiry,
    )
    AuthSession.update(expires_at=expiry).where(AuthSession.id == session.id).execute()
    session.expires_at = expiry  # type: ignore[assignment]
    return token


def access_token_for(
    membership: Membership,
    session_id: str,
    settings: Settings,
    master_key: bytes,
    credential_id: int | None = None,
) -> str:
    claims = AccessClaims(
        user_id=membership.user_id,
        company_id=membership.company_id,
        membership_id=membership.id,
        role=membership.role,
        epoch=membership.session_epoch,
        session_id=session_id,
        credential_id=credential_id,
    )
    return issue_access_token(master_key, claims, settings.access_token_seconds)


def start_session(
    membership: Membership, settings: Settings, master_key: bytes, credential_id: int | None = None
) -> IssuedTokens:
    """Open a session in the membership's company (call inside a transaction); ``credential_id``
    names the company-set password it was opened with, which scopes it to that company."""
    session = AuthSession.create(
        id=secrets.token_hex(16),
        user=membership.user_id,
        company=membership.company_id,
        created_at=clock.now(),
        credential=credential_id,
    )
    refresh = new_refresh_token(session, settings)
    return IssuedTokens(
        access_token=access_token_for(membership, session.id, settings, master_key, credential_id),
        refresh_token=refresh,
        expires_in=settings.access_token_seconds,
        session_id=session.id,
    )
