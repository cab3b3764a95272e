"""The engine's wire protocol, standard library only, so that the server and the standalone
reference client (client.py) import the same code.

Signed requests (the engine specification, section 5; docs/engine-auth.md): the five-line
canonical string METHOD LF PATH LF TIMESTAMP LF IDEMPOTENCY_KEY LF SHA256(body), signed with
HMAC-SHA256 under the operator's secret, lowercase hex.

Webhooks (docs/webhooks.md), signed by the engine and verified by a receiver. Headers:
``x-webhook-id`` (the message id, the same on every attempt), ``x-webhook-timestamp`` (unix seconds),
``x-webhook-signature`` (``v1=`` + lowercase hex HMAC-SHA256), and ``x-webhook-event-id`` (the
event's id, the same on every attempt).

Signed input: ``v1`` LF delivery-id LF timestamp LF endpoint-path LF raw-body. The three fields
before the body can never contain a line feed (checked when signing), and the body comes last and
whole, so two different deliveries can never produce the same input.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping

TOLERANCE_SECONDS = 300
VERSION = "v1"

# -- signed requests -------------------------------------------------------------------------------


def body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def canonical_string(method: str, path: str, timestamp: str, idempotency_key: str | None, body: bytes) -> str:
    """The five signed lines: METHOD, PATH (no query), TIMESTAMP, IDEMPOTENCY_KEY (empty line when
    absent), lowercase hex SHA-256 of the exact body bytes."""
    return "\n".join([method.upper(), path, timestamp, idempotency_key or "", body_hash(body)])


def sign_request(secret: str, canonical: str) -> str:
    return hmac.new(secret.encode(), canonical.encode(), hashlib.sha256).hexdigest()


# -- webhooks --------------------------------------------------------------------------------------


def signed_input(delivery_id: str, timestamp: str, path: str, body: bytes) -> bytes:
    for name, value in (("delivery id", delivery_id), ("timestamp", timestamp), ("path", path)):
        if "\n" in value or "\r" in value:
            raise ValueError(f"the webhook {name} may not contain a line break")
    return f"{VERSION}\n{delivery_id}\n{timestamp}\n{path}\n".encode() + body


def sign(secret: str, delivery_id: str, timestamp: str, path: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), signed_input(delivery_id, timestamp, path, body), hashlib.sha256)
    return f"{VERSION}={digest.hexdigest()}"


def verify(
    secret: str,
    headers: Mapping[str, str],
    path: str,
    body: bytes,
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    """True when a delivery is authentic and fresh. ``headers`` is looked up case-insensitively;
    ``path`` is the path the receiver was called on; ``body`` the raw bytes, never a parsed object.
    The timestamp is checked before any HMAC work; the comparison is constant-time."""
    lowered = {k.lower(): v for k, v in headers.items()}
    delivery_id = lowered.get("x-webhook-id", "")
    timestamp = lowered.get("x-webhook-timestamp", "")
    signature = lowered.get("x-webhook-signature", "")
    if not (delivery_id and timestamp.isdigit() and signature):
        return False
    moment = time.time() if now is None else now
    if abs(moment - int(timestamp)) > tolerance:
        return False
    try:
        expected = sign(secret, delivery_id, timestamp, path, body)
    except ValueError:
        return False
    return hmac.compare_digest(expected.encode(), signature.encode())


def canonical_instruction(
    payout_id: str, asset: str, amount_minor: str | int, destination: str, chain_id: str
) -> bytes:
    """The bytes an operator signs with its Ed25519 key for a payout (issue 43): the UTF-8 JSON
    object of exactly these five members, keys sorted, no whitespace, the destination lower-cased
    (appliance/engine/instructions.py verifies; docs/engine-auth.md, Instruction signatures)."""
    members = {
        "amountMinor": str(amount_minor),
        "asset": asset,
        "chainId": chain_id,
        "destination": destination.lower(),
        "payoutId": payout_id,
    }
    return json.dumps(members, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
