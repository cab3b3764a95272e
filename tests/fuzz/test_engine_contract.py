"""Requests generated from the payout engine's own OpenAPI document, each signed by an operator
with a fresh timestamp and a fresh Idempotency-Key (a signature is admitted once, by design, so a
generated request must never repeat one): never a 500, every answer as documented."""

from __future__ import annotations

import json
import uuid
from urllib.parse import unquote

import pytest
import schemathesis
from schemathesis.core import NOT_SET

from appliance.common import clock
from appliance.engine.client import canonical_string, sign
from tests.fuzz.contract import SETTINGS, document, send

pytestmark = pytest.mark.fuzz

schema = schemathesis.openapi.from_dict(document("engine"))


def signed(case, world) -> tuple[dict[str, str], bytes]:
    """The signature headers of ``case`` and the exact bytes to send as its body."""
    if case.body is NOT_SET:
        body = b""
    elif isinstance(case.body, bytes):  # negative cases may carry raw bytes of another media type
        body = case.body
    else:
        body = json.dumps(case.body, default=str).encode()
    key = uuid.uuid4().hex
    timestamp = str(clock.unix())
    canonical = canonical_string(case.method, unquote(case.formatted_path), timestamp, key, body)
    headers = {
        "X-Operator-Id": world.operator_id,
        "X-Timestamp": timestamp,
        "X-Signature": sign(world.secret, canonical),
        "Idempotency-Key": key,
    }
    if body:
        headers["Content-Type"] = case.media_type or "application/json"
    return headers, body


@schema.parametrize()
@SETTINGS
def test_the_engine_keeps_its_contract_for_a_signed_operator(case, engine_world) -> None:
    headers, body = signed(case, engine_world)
    send("engine", case, engine_world.app, headers, data=body)
