"""Reference client of the payout engine's signed-request protocol. Usable on its own: it needs
only the standard library, ``requests`` and protocol.py beside it (the signing code the server
uses too).

    client = EngineClient("http://127.0.0.1:8081", "op_demo0001", secret)
    client.submit_payout("pyo_order0001", "USDC", "2500000", "0xabc…")

An operator with a signing key (docs/engine-auth.md, Instruction signatures) gives its Ed25519
private key (64 hex digits) as ``instruction_key``: every payout then carries ``instructionSignature``
over its canonical instruction (instructions.py beside it, which needs ``cryptography``; the
asset's chainId is asked of GET /v1/assets once unless given).

    client = EngineClient(base, "op_demo0001", secret, instruction_key=private_key_hex)

Each attempt is signed afresh (new timestamp) while the Idempotency-Key stays the same, so a retry
can never pay twice. Only transport failures and 429, 502, 503 and 504 are retried, at most three
attempts in all, each with a 10-second timeout and jittered exponential backoff; a 4xx is never
retried. Two requests that would carry an identical signature (same method, path, second, key and
body) are never sent: the client waits for the clock to tick instead.
"""

from __future__ import annotations

import json
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

from appliance.engine.protocol import body_hash, canonical_instruction, canonical_string, verify
from appliance.engine.protocol import sign_request as sign

RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})


class EngineError(Exception):
    """A final (non-retried or retries exhausted) answer that is not a success."""

    def __init__(self, status: int | None, body: Any, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class EngineClient:
    def __init__(
        self,
        base_url: str,
        operator_id: str,
        secret: str,
        *,
        max_attempts: int = 3,
        timeout: float = 10.0,
        backoff: float = 0.25,
        session: requests.Session | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        instruction_key: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.operator_id = operator_id
        self.secret = secret
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.backoff = backoff
        self.session = session or requests.Session()
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._last_second: dict[str, int] = {}
        self.attempts_made = 0  # of the last request, for callers that report it
        self.instruction_key = instruction_key
        self._chains: dict[str, str] = {}  # asset code -> chainId, from GET /v1/assets

    # -- protocol --------------------------------------------------------------------------------

    def _timestamp_for(self, fingerprint: str) -> str:
        """A timestamp that gives this request a signature never sent before by this client."""
        with self._lock:
            while True:
                second = int(self._clock())
                if self._last_second.get(fingerprint) != second:
                    self._last_second[fingerprint] = second
                    if len(self._last_second) > 4096:
                        self._last_second = {fingerprint: second}
                    return str(second)
                self._sleep(max(0.01, second + 1 - self._clock()))

    def signed_headers(
        self, method: str, path: str, body: bytes, idempotency_key: str | None
    ) -> dict[str, str]:
        fingerprint = "\n".join([method.upper(), path, idempotency_key or "", body_hash(body)])
        timestamp = self._timestamp_for(fingerprint)
        headers = {
            "X-Operator-Id": self.operator_id,
            "X-Timestamp": timestamp,
            "X-Signature": sign(
                self.secret, canonical_string(method, path, timestamp, idempotency_key, body)
            ),
        }
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        if body:
            headers["Content-Type"] = "application/json"
        return headers

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> requests.Response:
        """Send with retries; returns the final response (which may be a 4xx or 5xx)."""
        body = b"" if json_body is None else json.dumps(json_body, separators=(",", ":")).encode()
        last_error: Exception | None = None
        for attempt in range(1, self.max_attempts + 1):
            self.attempts_made = attempt
            headers = self.signed_headers(method, path, body, idempotency_key)
            try:
                response = self.session.request(
                    method,
                    self.base_url + path,
                    params=params,
                    data=body or None,
                    headers=headers,
                    timeout=self.timeout,
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                last_error = exc
            else:
                if response.status_code not in RETRYABLE_STATUSES or attempt == self.max_attempts:
                    return response
                last_error = None
            if attempt < self.max_attempts:
                delay = self.backoff * (2 ** (attempt - 1))
                self._sleep(delay / 2 + random.uniform(0, delay / 2))
        assert last_error is not None
        raise EngineError(None, None, f"transport failure after {self.max_attempts} attempts: {last_error}")

    def _json(self, response: requests.Response) -> Any:
        body = response.json() if response.content else None
        if response.status_code >= 400:
            detail = body.get("detail") if isinstance(body, dict) else response.text
            raise EngineError(response.status_code, body, f"{response.status_code}: {detail}")
        return body

    # -- operations ------------------------------------------------------------------------------

    def submit_payout(
        self,
        payout_id: str,
        asset: str,
        amount_minor: str,
        destination: str,
        *,
        idempotency_key: str | None = None,
        chain_id: str | None = None,
    ) -> dict[str, Any]:
        key = idempotency_key or f"{payout_id}:{secrets.token_hex(8)}"
        payload = {
            "payoutId": payout_id,
            "asset": asset,
            "amountMinor": amount_minor,
            "destination": destination,
        }
        if self.instruction_key is not None:
            payload["instructionSignature"] = self.instruction_signature(
                payout_id, asset, amount_minor, destination, chain_id or self.chain_of(asset)
            )
        return self._json(self.request("POST", "/v1/payouts", json_body=payload, idempotency_key=key))

    def instruction_signature(
        self, payout_id: str, asset: str, amount_minor: str, destination: str, chain_id: str
    ) -> str:
        """The operator's Ed25519 signature (128 hex digits) over the canonical instruction. Needs
        the `cryptography` package, and only here: without instruction_key the client needs none."""
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        if self.instruction_key is None:
            raise ValueError("no instruction_key: this client signs no instructions")
        message = canonical_instruction(payout_id, asset, amount_minor, destination, chain_id)
        return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(self.instruction_key)).sign(message).hex()

    def chain_of(self, asset: str) -> str:
        """The chainId of the one offered asset entry coded ``asset`` (asked once)."""
        if asset not in self._chains:
            entries = self._json(self.request("GET", "/v1/assets"))["assets"]
            chains = {entry["chainId"] for entry in entries if entry["assetCode"] == asset}
            if len(chains) != 1:
                raise EngineError(None, None, f"asset {asset} names {len(chains)} chains here: give chain_id")
            self._chains[asset] = chains.pop()
        return self._chains[asset]

    def get_export(self, job_id: str) -> dict[str, Any]:
        return self._json(self.request("GET", f"/v1/exports/{job_id}"))

    def download_export(self, job_id: str, chunk_size: int = 65536) -> Iterator[bytes]:
        """Stream a completed export's CSV. A transfer broken by the server raises (requests'
        ChunkedEncodingError): a short file is never mistaken for a complete one."""
        path = f"/v1/exports/{job_id}/download"
        response = self.session.get(
            self.base_url + path,
            headers=self.signed_headers("GET", path, b"", None),
            stream=True,
            timeout=self.timeout,
        )
        if response.status_code >= 400:
            self._json(response)
        yield from response.iter_content(chunk_size)

    def get_payout(self, payout_id: str) -> dict[str, Any]:
        return self._json(self.request("GET", f"/v1/payouts/{payout_id}"))

    def list_payouts(
        self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> Any:
        params = {
            k: v for k, v in {"status": status, "limit": limit, "cursor": cursor}.items() if v is not None
        }
        return self._json(self.request("GET", "/v1/payouts", params=params))


# -- receiving webhooks -----------------------------------------------------------------------------


def verify_webhook(
    secret: str, headers: Any, path: str, body: bytes, *, now: float | None = None, tolerance: int = 300
) -> bool:
    """A receiver's check of a webhook delivery (docs/webhooks.md): ``headers`` as received (any
    mapping), ``path`` the path the receiver was called on, ``body`` the raw bytes. The 300 s
    tolerance is checked before any HMAC work; the comparison is constant-time."""
    return verify(secret, dict(headers), path, body, now=now, tolerance=tolerance)
