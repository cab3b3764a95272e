"""Signed requests against the engine's test client."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.engine.auth.operators import create_operator
from appliance.engine.client import canonical_string, sign


def make_operator(app, operator_id: str = "op_alpha0001") -> dict[str, str]:
    with app.app_context():
        return create_operator(app.extensions["engine"].master_key, operator_id)


DESTINATION = "0x" + "ab" * 20


def payout_request(
    payout_id: str = "pyo_valid0001",
    *,
    asset: str = "USDC",
    amount: str = "1000",
    destination: str = DESTINATION,
) -> dict[str, str]:
    """The body of POST /v1/payouts."""
    return {"payoutId": payout_id, "asset": asset, "amountMinor": amount, "destination": destination}


class Signer:
    def __init__(self, client, operator_id: str, secret: str) -> None:
        self.client = client
        self.operator_id = operator_id
        self.secret = secret
        self._offset = 0

    def headers(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        key: str | None = None,
        *,
        timestamp: int | None = None,
        sign_path: str | None = None,
        sign_key: str | bool | None = True,
    ) -> dict[str, str]:
        if timestamp is None:
            # Successive calls in one test get distinct timestamps, so they are never replays.
            self._offset += 1
            timestamp = clock.unix() - 30 + self._offset % 50
        signed_key = key if sign_key is True else (sign_key or None)
        canonical = canonical_string(
            method, sign_path or path.split("?")[0], str(timestamp), signed_key, body
        )
        headers = {
            "X-Operator-Id": self.operator_id,
            "X-Timestamp": str(timestamp),
            "X-Signature": sign(self.secret, canonical),
        }
        if key is not None:
            headers["Idempotency-Key"] = key
        if body:
            headers["Content-Type"] = "application/json"
        return headers

    def request(self, method: str, path: str, payload: Any = None, key: str | None = None, **kw: Any):
        body = (
            b""
            if payload is None
            else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
        )
        headers = self.headers(method, path, body, key, **kw)
        return self.client.open(path, method=method, data=body or None, headers=headers)

    def submit(
        self,
        payout_id: str,
        key: str | None = None,
        amount: str = "1000",
        asset: str = "USDC",
        destination: str = DESTINATION,
    ):
        payload = payout_request(payout_id, asset=asset, amount=amount, destination=destination)
        return self.request("POST", "/v1/payouts", payload, key=key or f"key-{payout_id}")
