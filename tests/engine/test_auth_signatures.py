"""Signed-request authentication: one opaque 401 for every cause, rotation, windows, replays."""

from __future__ import annotations

import logging

import pytest

from appliance.common import clock
from appliance.common.db import make_database
from appliance.engine.auth.operators import add_secret, remove_secret
from appliance.engine.auth.signature import OPAQUE_DETAIL
from tests.engine.helpers import Signer, make_operator, payout_request


@pytest.fixture
def signer(engine_app, engine_client) -> Signer:
    op = make_operator(engine_app)
    return Signer(engine_client, op["operatorId"], op["secret"])


def _assert_opaque_401(response) -> None:
    assert response.status_code == 401
    body = response.json
    assert body["type"] == "about:blank#unauthorized"
    assert body["detail"] == OPAQUE_DETAIL
    assert body["requestId"] == response.headers["X-Request-Id"]


def test_a_correctly_signed_read_is_admitted(signer) -> None:
    assert signer.request("GET", "/v1/payouts").status_code == 200


def test_an_unsigned_request_is_401(engine_client) -> None:
    _assert_opaque_401(engine_client.get("/v1/payouts"))


def test_a_wrong_secret_is_401(signer) -> None:
    signer.secret = "f" * 64
    _assert_opaque_401(signer.request("GET", "/v1/payouts"))


def test_an_unknown_operator_is_the_same_401(signer) -> None:
    signer.operator_id = "op_nobody0001"
    _assert_opaque_401(signer.request("GET", "/v1/payouts"))


def test_a_malformed_operator_id_is_the_same_401(signer) -> None:
    signer.operator_id = "OP_BAD"
    _assert_opaque_401(signer.request("GET", "/v1/payouts"))


def test_a_signed_query_string_is_401_because_the_query_is_never_signed(signer, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="appliance.engine.auth"):
        response = signer.request("GET", "/v1/payouts?limit=5", sign_path="/v1/payouts?limit=5")
    _assert_opaque_401(response)
    assert "query string signed" in caplog.text
    assert response.json["requestId"] in caplog.text


def test_the_query_string_is_stripped_before_verification(signer) -> None:
    assert signer.request("GET", "/v1/payouts?limit=5").status_code == 200


def test_a_four_line_canonical_string_is_401(signer, caplog) -> None:
    import hashlib

    from appliance.engine.client import sign

    timestamp = str(clock.unix())
    four = "\n".join(["GET", "/v1/payouts", timestamp, hashlib.sha256(b"").hexdigest()])
    headers = {
        "X-Operator-Id": signer.operator_id,
        "X-Timestamp": timestamp,
        "X-Signature": sign(signer.secret, four),
    }
    with caplog.at_level(logging.WARNING, logger="appliance.engine.auth"):
        _assert_opaque_401(signer.client.get("/v1/payouts", headers=headers))
    assert "four-line" in caplog.text


def test_a_replayed_signature_is_401(signer) -> None:
    headers = signer.headers("GET", "/v1/payouts")
    assert signer.client.get("/v1/payouts", headers=headers).status_code == 200
    _assert_opaque_401(signer.client.get("/v1/payouts", headers=headers))


def test_reads_that_differ_only_in_query_string_in_one_second_are_replays(signer) -> None:
    headers = signer.headers("GET", "/v1/payouts", timestamp=clock.unix())
    assert signer.client.get("/v1/payouts?limit=1", headers=headers).status_code == 200
    _assert_opaque_401(signer.client.get("/v1/payouts?limit=2", headers=headers))


@pytest.mark.parametrize("skew", [61, -61, 3600, -3600])
def test_a_clock_beyond_sixty_seconds_either_way_is_401(signer, skew: int) -> None:
    _assert_opaque_401(signer.request("GET", "/v1/payouts", timestamp=clock.unix() + skew))


@pytest.mark.parametrize("skew", [60, -60, 0])
def test_a_clock_within_sixty_seconds_either_way_is_admitted(signer, skew: int) -> None:
    # The clock stands still, so a slow machine cannot push -60 to -61 between signing and checking.
    clock.freeze(clock.now())
    try:
        assert signer.request("GET", "/v1/payouts", timestamp=clock.unix() + skew).status_code == 200
    finally:
        clock.freeze(None)


@pytest.mark.parametrize("timestamp", ["", "12a", "-5", "1e9"])
def test_a_malformed_timestamp_is_401(signer, timestamp: str) -> None:
    headers = signer.headers("GET", "/v1/payouts")
    headers["X-Timestamp"] = timestamp
    _assert_opaque_401(signer.client.get("/v1/payouts", headers=headers))


def test_an_idempotency_key_sent_but_not_signed_is_401(signer) -> None:
    response = signer.request(
        "POST",
        "/v1/payouts",
        payout_request("pyo_abcdefgh1", amount="5"),
        key="key-00000001",
        sign_key=False,
    )
    _assert_opaque_401(response)


def test_an_idempotency_key_signed_but_not_sent_is_401(signer) -> None:
    body = (
        b'{"payoutId":"pyo_abcdefgh1","asset":"USDC","amountMinor":"5",'
        b'"destination":"0xabababababababababababababababababababab"}'
    )
    headers = signer.headers("POST", "/v1/payouts", body, key=None, sign_key="key-00000001")
    headers["Idempotency-Key"] = "key-00000002"  # sent, but not the one signed
    _assert_opaque_401(signer.client.post("/v1/payouts", data=body, headers=headers))


def test_a_body_other_than_the_signed_one_is_401(signer) -> None:
    body = (
        b'{"payoutId":"pyo_abcdefgh1","asset":"USDC","amountMinor":"5",'
        b'"destination":"0xabababababababababababababababababababab"}'
    )
    headers = signer.headers("POST", "/v1/payouts", body, key="key-00000001")
    tampered = body.replace(b'"5"', b'"6"')
    _assert_opaque_401(signer.client.post("/v1/payouts", data=tampered, headers=headers))


def test_every_configured_secret_verifies_and_a_removed_one_stops(engine_app, signer) -> None:
    with engine_app.app_context():
        added = add_secret(engine_app.extensions["engine"].master_key, signer.operator_id)
    old_secret = signer.secret
    signer.secret = added["secret"]
    assert signer.request("GET", "/v1/payouts").status_code == 200
    signer.secret = old_secret
    assert signer.request("GET", "/v1/payouts").status_code == 200
    with engine_app.app_context():
        from appliance.engine.auth.operators import secret_ids

        first = next(s for s in secret_ids(signer.operator_id) if s != added["secretId"])
        remove_secret(signer.operator_id, first)
    _assert_opaque_401(signer.request("GET", "/v1/payouts"))
    signer.secret = added["secret"]
    assert signer.request("GET", "/v1/payouts").status_code == 200


def test_secrets_do_not_rest_in_the_clear_in_the_database(engine_app, signer, data_dir, settings) -> None:
    if settings.engine_db_url.startswith("postgresql://"):
        db = make_database(settings.engine_db_url)
        with db.connection_context():
            tables = db.get_tables()
            raw = "\n".join(
                row[0]
                for table in tables
                for row in db.execute_sql(f'SELECT t::text FROM "{table}" t').fetchall()
            ).encode()
        db.close_all()
        assert "operator_secret" in tables and b"op_alpha0001" in raw  # the dump really read the rows
        assert signer.secret.encode().hex().encode() not in raw  # bytea columns read as hex
    else:
        raw = (data_dir / "engine.db").read_bytes()
        wal = data_dir / "engine.db-wal"
        if wal.exists():
            raw += wal.read_bytes()
    assert signer.secret.encode() not in raw


def test_health_endpoints_need_no_signature(engine_client) -> None:
    assert engine_client.get("/health/live").status_code == 200
    assert engine_client.get("/health/ready").status_code == 200


def test_treasury_and_reconciliation_answer_501_tenant_scope_unavailable(signer) -> None:
    for path in ("/v1/treasury/positions?asset=USDC", "/v1/reconciliation/findings?asset=USDC"):
        response = signer.request("GET", path)
        assert response.status_code == 501
        assert response.json["type"] == "about:blank#tenant-scope-unavailable"
        assert set(response.json) == {"type", "detail", "status", "requestId"}


def test_treasury_without_a_signature_is_401(engine_client) -> None:
    _assert_opaque_401(engine_client.get("/v1/treasury/positions"))


def test_a_query_altered_in_transit_reads_only_the_same_operator_and_uses_up_the_signature(
    engine_app, signer
) -> None:
    """Issue 41, item 12 (documented, docs/engine-auth.md): the query string is never signed, so
    an interceptor may alter the query of a signed read; the engine then answers another read of
    the same operator only, and the signature is spent: the original request is a replay."""
    import requests

    from tests.conftest import serving

    other = make_operator(engine_app, "op_bravo0001")
    bravo = Signer(signer.client, other["operatorId"], other["secret"])
    assert bravo.submit("pyo_bravopay1").status_code == 201
    assert signer.submit("pyo_alphapay1").status_code == 201
    headers = signer.headers("GET", "/v1/payouts")
    with serving(engine_app) as url:
        altered = requests.get(f"{url}/v1/payouts?limit=100&status=REQUESTED", headers=headers, timeout=10)
        original = requests.get(f"{url}/v1/payouts?limit=1", headers=headers, timeout=10)
    assert altered.status_code == 200
    assert [p["payoutId"] for p in altered.json()["payouts"]] == ["pyo_alphapay1"]
    assert original.status_code == 401 and original.json()["detail"] == OPAQUE_DETAIL
