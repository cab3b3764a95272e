"""Access tokens: short-lived JWTs (HS256) naming the user, the company, the membership, its role
and session epoch, and the sign-in session they belong to.

Expiry is checked against appliance.common.clock (not the wall clock) so tests can move time.
"""

from __future__ import annotations

import dataclasses
import functools
import uuid

import jwt

from appliance.common import clock
from appliance.common.keys import subkey

ISSUER = "appliance-dispatch"


@dataclasses.dataclass(frozen=True)
class AccessClaims:
    user_id: int
    company_id: int
    membership_id: int
    role: str
    epoch: int
    session_id: str
    # The company-set password the session was opened with (docs/identity.md): such a session
    # acts only in its company and sees none of the account's other memberships.
    credential_id: int | None = None


@functools.lru_cache(maxsize=16)
def signing_key(master_key: bytes) -> bytes:
    # Derived once per master key, not on every request.
    return subkey(master_key, "dispatch-jwt")


def issue_access_token(master_key: bytes, claims: AccessClaims, lifetime_seconds: int) -> str:
    issued = clock.unix()
    payload = {
        "iss": ISSUER,
        "sub": str(claims.user_id),
        "cid": claims.company_id,
        "mid": claims.membership_id,
        "role": claims.role,
        "ep": claims.epoch,
        "sid": claims.session_id,
        "iat": issued,
        "exp": issued + lifetime_seconds,
        "jti": uuid.uuid4().hex,
    }
    if claims.credential_id is not None:
        payload["crd"] = claims.credential_id
    return jwt.encode(payload, signing_key(master_key), algorithm="HS256")


def decode_access_token(master_key: bytes, token: str) -> AccessClaims | None:
    """The claims of a valid, unexpired token; None for anything else."""
    verified = _verified_claims(signing_key(master_key), token)
    if verified is None:
        return None
    claims, expires = verified
    return claims if expires > clock.unix() else None


@functools.lru_cache(maxsize=8192)
def _verified_claims(key: bytes, token: str) -> tuple[AccessClaims, int] | None:
    """The signature check and parsing of a token depend on nothing but the key and the token, so
    each token is verified once and its claims remembered (the expiry is compared on every use).
    A signed-in client sends the same token for minutes, on every request."""
    try:
        payload = jwt.decode(
            token,
            key,
            algorithms=["HS256"],
            issuer=ISSUER,
            options={"verify_exp": False, "verify_iat": False, "require": ["exp", "sub", "cid", "mid"]},
        )
        claims = AccessClaims(
            user_id=int(payload["sub"]),
            company_id=int(payload["cid"]),
            membership_id=int(payload["mid"]),
            role=str(payload["role"]),
            epoch=int(payload["ep"]),
            session_id=str(payload["sid"]),
            credential_id=int(payload["crd"]) if payload.get("crd") is not None else None,
        )
        return claims, int(payload["exp"])
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        return None
