"""Authentication first (issue 26, item 3): on every /v1 request the signature is checked before
anything about the request's shape, so a caller who is not authenticated gets the opaque 401 and
learns nothing else; a correctly signed bad request still gets its 400 (or 415)."""

from __future__ import annotations

import json
import re
from urllib.parse import unquote

import pytest

from appliance.engine.auth.signature import OPAQUE_DETAIL
from tests.engine.helpers import Signer, make_operator, payout_request

GOOD_BODY = json.dumps(payout_request("pyo_first0001", amount="5")).encode()
# amountMinor as a JSON number: a 400 of the body's own validation (the specification's example).
BAD_BODY = json.dumps({**payout_request("pyo_first0002"), "amountMinor": 5}).encode()
KEY = "key-first-0001"
OTHER_KEY = "key-first-0002"
MALFORMED_KEY = "no"  # shorter than 8 characters


@pytest.fixture
def signer(engine_app, engine_client) -> Signer:
    op = make_operator(engine_app)
    return Signer(engine_client, op["operatorId"], op["secret"])


def _is_opaque_401(response) -> bool:
    return (
        response.status_code == 401
        and response.json["type"] == "about:blank#unauthorized"
        and response.json["detail"] == OPAQUE_DETAIL
        and "errors" not in response.json
    )


def _submit(signer: Signer, body: bytes, *, sent: str | None, signed: str | None):
    headers = signer.headers("POST", "/v1/payouts", body, key=sent, sign_key=signed or False)
    return signer.client.post("/v1/payouts", data=body, headers=headers)


# Idempotency-Key, the one header line the signature covers besides X-Timestamp: every combination
# of sent or not sent and signed or not signed, with a body that is good and one that is bad.
@pytest.mark.parametrize("body", [GOOD_BODY, BAD_BODY], ids=["good body", "bad body"])
@pytest.mark.parametrize(
    ("sent", "signed"),
    [(None, KEY), (KEY, None), (KEY, OTHER_KEY), (MALFORMED_KEY, None), (MALFORMED_KEY, KEY)],
    ids=[
        "signed but not sent",
        "sent but not signed",
        "sent and another signed",
        "malformed, sent but not signed",
        "malformed and another signed",
    ],
)
def test_an_idempotency_key_that_the_signature_does_not_cover_is_401_before_any_validation(
    signer, body: bytes, sent: str | None, signed: str | None
) -> None:
    assert _is_opaque_401(_submit(signer, body, sent=sent, signed=signed))


def test_a_signed_submission_whose_signed_key_was_not_sent_is_401_not_400_key_required(signer) -> None:
    # The case: signed over an Idempotency-Key that was not sent.
    response = _submit(signer, GOOD_BODY, sent=None, signed=KEY)
    assert _is_opaque_401(response)
    assert "Idempotency-Key" not in response.get_data(as_text=True)


def test_a_correctly_signed_submission_without_a_key_is_400_key_required(signer) -> None:
    response = _submit(signer, GOOD_BODY, sent=None, signed=None)
    assert response.status_code == 400
    assert response.json["errors"] == [{"field": "Idempotency-Key", "message": "required"}]


def test_a_correctly_signed_submission_with_a_malformed_key_is_400_key_malformed(signer) -> None:
    response = _submit(signer, GOOD_BODY, sent=MALFORMED_KEY, signed=MALFORMED_KEY)
    assert response.status_code == 400
    assert response.json["errors"] == [{"field": "Idempotency-Key", "message": "malformed"}]


def test_a_correctly_signed_submission_with_a_bad_body_is_400_naming_the_field(signer) -> None:
    response = _submit(signer, BAD_BODY, sent=KEY, signed=KEY)
    assert response.status_code == 400
    assert [e["field"] for e in response.json["errors"]] == ["amountMinor"]


def test_a_correctly_signed_submission_with_a_good_key_and_body_is_accepted(signer) -> None:
    assert _submit(signer, GOOD_BODY, sent=KEY, signed=KEY).status_code == 201


def test_a_missing_key_and_a_bad_body_signed_correctly_name_the_key_first(signer) -> None:
    response = _submit(signer, BAD_BODY, sent=None, signed=None)
    assert response.status_code == 400
    assert response.json["errors"] == [{"field": "Idempotency-Key", "message": "required"}]


# X-Timestamp (signed), X-Operator-Id and X-Signature: not sent, or sent other than signed, on a
# request that is bad in every other way too (no key, a bad body, a wrong content type).
@pytest.mark.parametrize("header", ["X-Operator-Id", "X-Timestamp", "X-Signature"])
@pytest.mark.parametrize("how", ["not sent", "sent other than signed"])
def test_a_signature_header_missing_or_altered_is_401_on_an_otherwise_bad_request(
    signer, header: str, how: str
) -> None:
    headers = signer.headers("POST", "/v1/payouts", BAD_BODY)
    headers["Content-Type"] = "text/plain"
    if how == "not sent":
        del headers[header]
    else:
        headers[header] = {
            "X-Operator-Id": "op_someone0001",
            "X-Timestamp": str(int(headers["X-Timestamp"]) + 1),
            "X-Signature": "0" * 64,
        }[header]
    assert _is_opaque_401(signer.client.post("/v1/payouts", data=BAD_BODY, headers=headers))


def test_a_wrong_content_type_is_401_unsigned_and_415_signed(signer) -> None:
    unsigned = signer.client.post(
        "/v1/payouts", data=GOOD_BODY, headers={"Content-Type": "text/plain", "Idempotency-Key": KEY}
    )
    assert _is_opaque_401(unsigned)
    headers = signer.headers("POST", "/v1/payouts", GOOD_BODY, key=KEY)
    headers["Content-Type"] = "text/plain"
    assert signer.client.post("/v1/payouts", data=GOOD_BODY, headers=headers).status_code == 415


@pytest.mark.parametrize(
    "path",
    ["/v1/payouts/not%20an%20id", "/v1/payouts?limit=0", "/v1/payouts?status=NOPE"],
    ids=["malformed path id", "limit out of range", "unknown status"],
)
def test_a_malformed_path_or_query_is_401_unsigned_and_400_signed(signer, path: str) -> None:
    assert _is_opaque_401(signer.client.get(path))
    signed_path = unquote(path.split("?")[0])  # the path as the engine reads it, decoded
    assert signer.request("GET", path, sign_path=signed_path).status_code == 400


def test_every_v1_operation_answers_an_unsigned_malformed_request_with_401(engine_app, engine_client) -> None:
    """Each route of the engine's URL map under /v1, with garbage in its path parameters, a bad
    query, a body that is not JSON, a wrong content type and a malformed Idempotency-Key."""
    seen = 0
    for rule in engine_app.url_map.iter_rules():
        if not rule.rule.startswith("/v1/"):
            continue
        path = re.sub(r"<[^>]+>", "%00bad%20id", rule.rule) + "?limit=-1&cursor=%00"
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            response = engine_client.open(
                path,
                method=method,
                data=b"{not json",
                headers={"Content-Type": "text/plain", "Idempotency-Key": "x"},
            )
            assert _is_opaque_401(response), (method, rule.rule, response.status_code, response.json)
            seen += 1
    assert seen >= 10  # the whole API, not an empty map


def test_a_replay_of_a_correctly_signed_bad_submission_is_401(signer) -> None:
    headers = signer.headers("POST", "/v1/payouts", BAD_BODY, key=KEY)
    assert signer.client.post("/v1/payouts", data=BAD_BODY, headers=headers).status_code == 400
    assert _is_opaque_401(signer.client.post("/v1/payouts", data=BAD_BODY, headers=headers))


def test_a_replay_of_a_correctly_signed_submission_without_a_key_is_401(signer) -> None:
    headers = signer.headers("POST", "/v1/payouts", GOOD_BODY)
    assert signer.client.post("/v1/payouts", data=GOOD_BODY, headers=headers).status_code == 400
    assert _is_opaque_401(signer.client.post("/v1/payouts", data=GOOD_BODY, headers=headers))


def test_a_replay_of_a_correctly_signed_bad_read_is_401(signer) -> None:
    headers = signer.headers("GET", "/v1/payouts")
    assert signer.client.get("/v1/payouts?limit=0", headers=headers).status_code == 400
    assert _is_opaque_401(signer.client.get("/v1/payouts?limit=0", headers=headers))


def test_the_openapi_document_says_the_signature_is_verified_first(engine_client) -> None:
    document = engine_client.get("/openapi.json").json
    operations = [
        op for path, item in document["paths"].items() if path.startswith("/v1/") for op in item.values()
    ]
    assert operations and all("verified before anything else" in op["description"] for op in operations)
    assert all("401" in op["responses"] for op in operations)
