"""Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is ``whsec_`` and
the base64 of random bytes; the signature of a message is ``v1,`` and the base64 HMAC-SHA256, under
those bytes, of ``{webhook-id}.{webhook-timestamp}.{body}``. A receiver verifies it with any
Standard Webhooks library or the few lines in docs/integrations.md."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

PREFIX = "whsec_"
SECRET_BYTES = 32
TOLERANCE_SECONDS = 300


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX))


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None) -> bool:
    """True when ``body`` (the raw bytes) carries a valid signature and a fresh timestamp."""
    lowered = {k.lower(): v for k, v in headers.items()}
    message_id = lowered.get("webhook-id", "")
    timestamp = lowered.get("webhook-timestamp", "")
    if not message_id or not timestamp.isdigit():
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    expected = sign(secret, message_id, int(timestamp), body).encode()
    # The header may carry several space-separated signatures (a secret being rotated).
    return any(
        hmac.compare_digest(expected, s.encode()) for s in lowered.get("webhook-signature", "").split()
    )
