"""The signer's policy in the engine's own process (LocalSigner, what commands and tests sign
with), against the real database and the embedded chain: the payout pipeline's transactions pass;
a transaction unlike the stored payout, or of a paused operator, does not; a gas top-up above
signer_gas_cap_wei is refused and the payout waits, holding no nonce."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address

from appliance.engine.db import database
from appliance.engine.ledger import service
from appliance.engine.models import Broadcast, Payout
from appliance.engine.signer.core import LocalSigner, SignerRefused
from appliance.settings import Settings
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    Harness,
    harness_settings,
    make_harness,
)

OPERATOR = "op_alpha0001"
DESTINATION = "0x" + "e1" * 20


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


def _harness(settings: Settings, **environ: str) -> Harness:
    return make_harness(harness_settings(settings, environ), _mine)


def _native_tx(to: str, value: int) -> dict:
    return {
        "type": 2,
        "chainId": 1337,
        "nonce": 0,
        "to": to_checksum_address(to),
        "value": value,
        "data": b"",
        "gas": 21_000,
        "maxFeePerGas": 10**9,
        "maxPriorityFeePerGas": 10**9,
    }


def test_the_engine_signs_through_the_signers_policy_and_a_payout_completes(settings: Settings) -> None:
    harness = _harness(settings)
    custody = harness.app.extensions["engine"].custody
    assert isinstance(custody, LocalSigner)
    harness.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_localsig01", 12_345, destination=DESTINATION)
    harness.until_status("pyo_localsig01", "COMPLETED", seconds=60)


def test_a_transaction_unlike_the_stored_payout_or_of_a_paused_operator_is_refused(
    settings: Settings,
) -> None:
    harness = _harness(settings)
    custody = harness.app.extensions["engine"].custody
    harness.submit("pyo_localsig02", 5_000, destination=DESTINATION)  # unfunded: stays REQUESTED
    with database.connection_context():
        payout = Payout.get(Payout.payout_id == "pyo_localsig02")
        assert payout.status == "REQUESTED"
        raw, _hash = custody.sign_transaction(0, 0, _native_tx(DESTINATION, 5_000), payout_id=payout.id)
        assert raw
        with pytest.raises(SignerRefused, match="not 0x"):
            custody.sign_transaction(0, 0, _native_tx("0x" + "e2" * 20, 5_000), payout_id=payout.id)
        with pytest.raises(SignerRefused, match="pays 5000 minor units, not 4999"):
            custody.sign_transaction(0, 0, _native_tx(DESTINATION, 4_999), payout_id=payout.id)
        with pytest.raises(SignerRefused, match="no stored payout"):
            custody.sign_transaction(0, 0, _native_tx(DESTINATION, 5_000))
        service.set_paused(OPERATOR, True, "test")
        with pytest.raises(SignerRefused, match="is paused"):
            custody.sign_transaction(0, 0, _native_tx(DESTINATION, 5_000), payout_id=payout.id)


def test_a_gas_top_up_above_the_cap_is_refused_and_the_payout_waits_holding_no_nonce(
    settings: Settings,
) -> None:
    harness = _harness(settings, APPLIANCE_SIGNER_GAS_CAP_WEI="1000")
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("USDC", PAYOUT_WALLET, 5_000_000)
    chain.faucet("ETH", FEE_WALLET, ETHER)
    harness.submit("pyo_localsig03", 2_500_000, asset="USDC", destination=DESTINATION)
    harness.run_pass()
    reason = harness.detail("pyo_localsig03")["reason"]
    assert (
        reason.startswith("gas top-up not signed: a gas transfer of ") and "above the cap of 1000" in reason
    )
    with database.connection_context():
        assert Broadcast.select().count() == 0
    assert harness.payout("pyo_localsig03").status == "REQUESTED"


def test_a_payout_of_an_operator_with_a_signing_key_waits_unsigned_without_its_instruction(
    settings: Settings,
) -> None:
    from appliance.engine import instructions
    from appliance.engine.signer import admin

    harness = _harness(settings)
    harness.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, ETHER)
    admin.set_signing_key(
        harness.app.extensions["engine"].settings, OPERATOR, instructions.public_key_of("5d" * 32)
    )
    harness.submit("pyo_localsig04", 12_345, destination=DESTINATION)
    harness.run_pass()
    assert harness.payout("pyo_localsig04").status == "REQUESTED"
    assert "no instruction signature came" in harness.detail("pyo_localsig04")["reason"]
    with database.connection_context():
        assert Broadcast.select().count() == 0  # rolled back: no nonce held
