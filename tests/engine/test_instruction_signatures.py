"""Operators' Ed25519 signatures over payout instructions at the engine's API (issue 43): an
operator with a signing key is refused a payout without a valid signature (400), a valid one is
stored with the payout and handed on for the signer; operators without a key pay as before; the
reference client signs; docs/engine-auth.md's test vector is what the code computes; the CLI
command registers the key in the engine database."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.common.db import connection
from appliance.engine.client import EngineClient
from appliance.engine.db import database
from appliance.engine.instructions import canonical, public_key_of, sign, verify
from appliance.engine.models import OperatorSigningKey, Payout
from appliance.engine.payouts.instructions import (
    instruction_for,
    instruction_of,
    remove_signing_key,
    set_signing_key,
    signing_key_of,
)
from appliance.settings import Settings
from tests.conftest import serving
from tests.engine.helpers import DESTINATION, Signer, make_operator, payout_request

PRIVATE = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"  # RFC 8032, test 1
OTHER_PRIVATE = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"  # RFC 8032, test 2
DOCS = Path(__file__).resolve().parents[2] / "docs" / "engine-auth.md"


def signature(payout_id: str, asset: str, amount: str, destination: str = DESTINATION, key: str = PRIVATE):
    return sign(key, canonical(payout_id, asset, amount, destination, "eth_local"))


@pytest.fixture
def keyed(engine_app, engine_client) -> Signer:
    made = make_operator(engine_app)
    with engine_app.app_context(), connection(database):
        set_signing_key(made["operatorId"], public_key_of(PRIVATE))
    return Signer(engine_client, made["operatorId"], made["secret"])


def stored(payout_id: str) -> Payout | None:
    with connection(database):
        return Payout.get_or_none(Payout.payout_id == payout_id)


def test_a_keyed_operators_payout_without_or_with_an_altered_signature_is_refused_and_a_valid_one_stored(
    keyed: Signer,
) -> None:
    body = payout_request("pyo_signed0001", asset="USDC", amount="5000")

    missing = keyed.request("POST", "/v1/payouts", body, key="key-missing")
    assert missing.status_code == 400, missing.json
    assert missing.json["errors"][0]["field"] == "instructionSignature"
    assert "required" in missing.json["errors"][0]["message"]

    # Signed for 500, sent for 5000; or signed by another key; or not a signature at all.
    for number, wrong in enumerate(
        (
            signature("pyo_signed0001", "USDC", "500"),
            signature("pyo_signed0001", "USDC", "5000", key=OTHER_PRIVATE),
            "not hex",
            12345,
        )
    ):
        refused = keyed.request(
            "POST", "/v1/payouts", {**body, "instructionSignature": wrong}, key=f"key-wrong-{number:04d}"
        )
        assert refused.status_code == 400, refused.json
        assert refused.json["errors"][0]["field"] == "instructionSignature"
    assert stored("pyo_signed0001") is None

    valid = signature("pyo_signed0001", "USDC", "5000")
    accepted = keyed.request("POST", "/v1/payouts", {**body, "instructionSignature": valid}, key="key-valid")
    assert accepted.status_code == 201, accepted.json
    payout = stored("pyo_signed0001")
    assert payout is not None and payout.instruction_signature == valid
    signed = instruction_for(payout)
    assert signed is not None and signed.verify(public_key_of(PRIVATE))
    with connection(database):
        assert instruction_of(payout.id) == signed

    # A replay (same key, same instruction) answers the original; the stored signature stays.
    again = keyed.request(
        "POST", "/v1/payouts", {**body, "instructionSignature": valid.upper()}, key="key-valid"
    )
    assert again.status_code == 200 and again.json["outcome"] == "REPLAYED"
    unsigned_replay = keyed.request("POST", "/v1/payouts", body, key="key-valid")
    assert unsigned_replay.status_code == 400
    with connection(database):
        assert Payout.select().count() == 1
    assert stored("pyo_signed0001").instruction_signature == valid  # type: ignore[union-attr]


def test_an_operator_without_a_key_pays_as_before_and_a_well_formed_signature_is_stored_unverified(
    engine_app, engine_client
) -> None:
    made = make_operator(engine_app)
    api = Signer(engine_client, made["operatorId"], made["secret"])
    plain = api.request("POST", "/v1/payouts", payout_request("pyo_plain00001"), key="key-plain-0001")
    assert plain.status_code == 201, plain.json
    assert stored("pyo_plain00001").instruction_signature is None  # type: ignore[union-attr]
    # Ignored as any unknown member when it is not a signature's form.
    odd = api.request(
        "POST",
        "/v1/payouts",
        {**payout_request("pyo_plain00002"), "instructionSignature": 7},
        key="key-plain-0002",
    )
    assert odd.status_code == 201
    # Stored unverified (nothing to verify it with): a key registered later covers it.
    early = signature("pyo_plain00003", "USDC", "1000")
    kept = api.request(
        "POST",
        "/v1/payouts",
        {**payout_request("pyo_plain00003"), "instructionSignature": early},
        key="key-plain-0003",
    )
    assert kept.status_code == 201
    assert stored("pyo_plain00003").instruction_signature == early  # type: ignore[union-attr]
    with engine_app.app_context(), connection(database):
        set_signing_key(made["operatorId"], public_key_of(PRIVATE))
        assert remove_signing_key(made["operatorId"]) == {"operatorId": made["operatorId"], "revoked": True}
        assert signing_key_of(made["operatorId"]) is None
    after = api.request("POST", "/v1/payouts", payout_request("pyo_plain00004"), key="key-plain-0004")
    assert after.status_code == 201  # the key revoked: no signature needed again


def test_the_reference_client_signs_the_instruction_when_given_the_operators_private_key(
    engine_app, keyed: Signer
) -> None:
    with serving(engine_app) as url:
        unsigned = EngineClient(url, keyed.operator_id, keyed.secret)
        with pytest.raises(Exception, match="400"):
            unsigned.submit_payout("pyo_client0001", "USDC", "2500", DESTINATION)
        client = EngineClient(url, keyed.operator_id, keyed.secret, instruction_key=PRIVATE)
        answer = client.submit_payout(
            "pyo_client0001", "USDC", "2500", DESTINATION.upper().replace("0X", "0x")
        )
    assert answer["outcome"] == "ACCEPTED"
    payout = stored("pyo_client0001")
    assert payout is not None
    message = canonical("pyo_client0001", "USDC", "2500", DESTINATION, "eth_local")
    assert verify(public_key_of(PRIVATE), payout.instruction_signature, message)


def test_the_test_vector_of_the_documentation_is_what_the_code_computes() -> None:
    text = DOCS.read_text()

    def row(name: str) -> str:
        found = re.search(rf"^\| {name} \| `([^`]+)`", text, re.MULTILINE)
        assert found is not None, name
        return found.group(1)

    private, public = row("private key"), row("public key")
    assert private == PRIVATE and public_key_of(private) == public
    body = json.loads(row("body"))
    message = canonical(
        body["payoutId"], body["asset"], body["amountMinor"], body["destination"], "eth_local"
    )
    assert message.decode() == row("canonical instruction")
    assert sign(private, message) == row("instructionSignature")
    assert verify(public, row("instructionSignature"), message)


def test_add_signing_key_registers_the_key_in_the_engine_database_and_refuses_a_malformed_one(
    settings: Settings, engine_app
) -> None:
    made = make_operator(engine_app)
    args = ["--data-dir", str(settings.data_dir), "--json"]
    malformed = CliRunner().invoke(
        cli, ["operator", "add-signing-key", made["operatorId"], "--public-key", "abc", *args]
    )
    assert malformed.exit_code == 1
    assert malformed.stderr.strip() == (
        f"error: operator {made['operatorId']}: "
        "the public key is 64 hex digits (an Ed25519 public key, 32 bytes)"
    )
    unknown = CliRunner().invoke(
        cli, ["operator", "add-signing-key", "op_nobody0001", "--public-key", public_key_of(PRIVATE), *args]
    )
    assert unknown.exit_code == 1 and "no operator op_nobody0001" in unknown.stderr

    # The engine's side only: the signer's copy (appliance.engine.signer.admin) is another part's.
    CliRunner().invoke(
        cli,
        [
            "operator",
            "add-signing-key",
            made["operatorId"],
            "--public-key",
            public_key_of(PRIVATE).upper(),
            *args,
        ],
    )
    CliRunner().invoke(
        cli,
        [
            "operator",
            "add-signing-key",
            made["operatorId"],
            "--public-key",
            public_key_of(OTHER_PRIVATE),
            *args,
        ],
    )
    with connection(database):
        keys = list(OperatorSigningKey.select().order_by(OperatorSigningKey.id))
        assert [(k.public_key, k.revoked_at is None) for k in keys] == [
            (public_key_of(PRIVATE), False),  # replaced, kept with its revocation
            (public_key_of(OTHER_PRIVATE), True),
        ]
        assert signing_key_of(made["operatorId"]) == public_key_of(OTHER_PRIVATE)


def test_the_openapi_document_describes_instruction_signature_as_an_optional_extra(engine_client) -> None:
    doc = engine_client.get("/openapi.json").json
    submit = doc["components"]["schemas"]["PayoutSubmit"]
    field = submit["properties"]["instructionSignature"]
    assert field["pattern"] == "^[0-9a-f]{128}$" and field["type"] == "string"
    assert "Ed25519" in field["description"] and "docs/engine-auth.md" in field["description"]
    assert "instructionSignature" not in submit.get("required", [])
