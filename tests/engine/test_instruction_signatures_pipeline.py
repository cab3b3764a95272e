"""An operator's instruction signatures from the API to the signer (issue 43): with the key
registered by `appliance operator add-signing-key` (the engine's table and the signer's own
state), a payout submitted with its signature is signed and paid, and a payout row written straight
into the database for that operator, without one, is never signed."""

from __future__ import annotations

import json

from click.testing import CliRunner

from appliance.cli import cli
from appliance.common.db import connection
from appliance.engine.db import database
from appliance.engine.instructions import canonical, public_key_of, sign
from appliance.engine.models import Broadcast, Payout
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC, harness_settings, make_harness

PRIVATE = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"  # RFC 8032, test 1
OPERATOR = "op_alpha0001"
PAYEE = "0x" + "00" * 18 + "00d3"


def test_a_keyed_operators_signed_payout_is_paid_and_a_forged_row_without_a_signature_is_never_signed(
    settings,
) -> None:
    harness = make_harness(
        harness_settings(settings, {}), lambda app: app.extensions["engine"].chains.get("eth_local").mine()
    )
    harness.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, 10 * ETHER)
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    command = ["operator", "add-signing-key", OPERATOR, "--public-key", public_key_of(PRIVATE)]
    added = CliRunner().invoke(
        cli, [*command, "--data-dir", data_dir, "--json"], env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC}
    )
    assert added.exit_code == 0, added.output
    assert json.loads(added.stdout)["publicKey"] == public_key_of(PRIVATE)

    body = {"payoutId": "pyo_signed0001", "asset": "ETH", "amountMinor": "12345", "destination": PAYEE}
    body["instructionSignature"] = sign(
        PRIVATE, canonical("pyo_signed0001", "ETH", "12345", PAYEE, "eth_local")
    )
    accepted = harness.signer.request("POST", "/v1/payouts", body, key="key-signed-1")
    assert accepted.status_code == 201, accepted.json
    harness.until_status("pyo_signed0001", "COMPLETED")

    with connection(database):  # what a compromised web tier could write
        forged = Payout.create(
            operator=OPERATOR,
            payout_id="pyo_forged0001",
            idempotency_key="forged-1",
            instruction_hash="0" * 64,
            asset="ETH",
            chain_id="eth_local",
            amount_minor=str(ETHER),
            destination="0x" + "00" * 18 + "0bad",
            status="REQUESTED",
        )
    for _ in range(3):
        harness.run_pass()
    with connection(database):
        assert Payout.get_by_id(forged.id).status == "REQUESTED"
        assert not Broadcast.select().where(Broadcast.payout == forged.id).exists()
    assert "instruction" in harness.detail("pyo_forged0001")["reason"]
