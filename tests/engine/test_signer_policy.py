"""The signer's policy as a pure function (appliance/engine/signer/policy.py), and the addresses
serving processes derive from account xpubs, equal to those the key derives."""

from __future__ import annotations

import dataclasses

import pytest

from appliance.engine.custody import Custody
from appliance.engine.custody_public import address_from_xpub
from appliance.engine.outgoing.transactions import erc20_transfer_data
from appliance.engine.signer.policy import FEE_WALLET, PAYOUT_WALLET, Facts, StoredPayout, Tx, judge
from tests.engine.pipeline_harness import TEST_MNEMONIC

PAYOUT = "0x" + "11" * 20
FEE = "0x" + "22" * 20
DESTINATION = "0x" + "ab" * 20
OTHER = "0x" + "cd" * 20
USDC = "0x" + "33" * 20
NETWORK = 1337
DEPOSIT = (3, 7)


def _checksum(address: str) -> str:
    from eth_utils import to_checksum_address

    return to_checksum_address(address)


def stored(**changes: object) -> StoredPayout:
    payout = StoredPayout(
        payout_id="pyo_one",
        network_id=NETWORK,
        destination=DESTINATION,
        amount=5_000,
        contract=None,
        status="REQUESTED",
        paused=False,
        nonce=None,
        hold=None,
    )
    return dataclasses.replace(payout, **changes)  # type: ignore[arg-type]


def facts(**changes: object) -> Facts:
    found = Facts(
        payout_wallet=_checksum(PAYOUT),
        fee_wallet=_checksum(FEE),
        networks=frozenset({NETWORK}),
        contracts=frozenset({_checksum(USDC)}),
        payout=stored(),
        reserved_nonce=False,
        recipient_derived=False,
        gas_cap=10**16,
    )
    return dataclasses.replace(found, **changes)  # type: ignore[arg-type]


def tx(
    to: str = DESTINATION, value: int = 5_000, data: bytes = b"", nonce: int = 4, network: int = NETWORK
) -> Tx:
    return Tx(network_id=network, nonce=nonce, to=_checksum(to), value=value, data=data)


def test_the_addresses_derived_from_account_xpubs_are_the_ones_the_key_derives() -> None:
    custody = Custody(TEST_MNEMONIC)
    for account in (0, 1, 2, 9):
        xpub = custody.account_xpub(account)
        assert xpub.startswith("xpub")
        for index in (0, 1, 2, 17, 4096):
            assert address_from_xpub(xpub, index) == custody.address(account, index)


def test_an_extended_private_key_is_refused_where_a_public_one_is_expected() -> None:
    from bip_utils import Bip39SeedGenerator, Bip44, Bip44Coins

    private = Bip44.FromSeed(Bip39SeedGenerator(TEST_MNEMONIC).Generate(), Bip44Coins.ETHEREUM)
    xprv = private.Purpose().Coin().Account(5).PrivateKey().ToExtended()
    with pytest.raises(ValueError, match="must be public"):
        address_from_xpub(xprv, 0)


def test_a_payout_matching_its_stored_instruction_is_signed() -> None:
    assert judge(*PAYOUT_WALLET, tx(), facts()) is None


def test_an_erc20_payout_is_signed_as_the_transfer_call_to_its_assets_contract() -> None:
    token = facts(payout=stored(contract=_checksum(USDC)))
    call = erc20_transfer_data(DESTINATION, 5_000)
    assert judge(*PAYOUT_WALLET, tx(to=USDC, value=0, data=call), token) is None
    assert "not 0x" in (judge(*PAYOUT_WALLET, tx(to=OTHER, value=0, data=call), token) or "")
    elsewhere = erc20_transfer_data(OTHER, 5_000)
    assert "pays 0x" in (judge(*PAYOUT_WALLET, tx(to=USDC, value=0, data=elsewhere), token) or "")
    more = erc20_transfer_data(DESTINATION, 5_001)
    assert "not 5001" in (judge(*PAYOUT_WALLET, tx(to=USDC, value=0, data=more), token) or "")


def test_a_transfer_to_another_destination_than_the_stored_payouts_is_refused() -> None:
    assert judge(*PAYOUT_WALLET, tx(to=OTHER), facts()) == (
        f"payout pyo_one pays {DESTINATION}, not {_checksum(OTHER)}"
    )


def test_an_amount_other_than_the_stored_payouts_is_refused() -> None:
    assert judge(*PAYOUT_WALLET, tx(value=5_001), facts()) == "payout pyo_one pays 5000 minor units, not 5001"


def test_a_payout_of_a_paused_operator_is_refused() -> None:
    assert judge(*PAYOUT_WALLET, tx(), facts(payout=stored(paused=True))) == (
        "the operator of payout pyo_one is paused"
    )


def test_a_cancelled_failed_or_held_payout_and_a_transfer_naming_none_are_refused() -> None:
    assert "FAILED" in (judge(*PAYOUT_WALLET, tx(), facts(payout=stored(status="FAILED"))) or "")
    assert "held: approval" in (judge(*PAYOUT_WALLET, tx(), facts(payout=stored(hold="approval"))) or "")
    assert "no stored payout" in (judge(*PAYOUT_WALLET, tx(), facts(payout=None)) or "")
    assert "network 1" in (judge(*PAYOUT_WALLET, tx(network=1), facts()) or "")
    assert "data" in (judge(*PAYOUT_WALLET, tx(data=b"\x01"), facts()) or "")


def test_a_signed_payout_is_signed_again_only_at_its_own_nonce() -> None:
    signed = facts(payout=stored(status="BROADCAST", nonce=4, hold="would be held now"))
    assert judge(*PAYOUT_WALLET, tx(nonce=4), signed) is None  # a fee bump: the controls passed at 4
    assert judge(*PAYOUT_WALLET, tx(nonce=5), signed) == "payout pyo_one is signed at nonce 4, not 5"


def test_a_cancellation_is_a_zero_value_self_transfer_left_to_the_signers_journal() -> None:
    cancel = tx(to=PAYOUT, value=0)
    assert judge(*PAYOUT_WALLET, cancel, facts(payout=None)) is None  # bounds.journal_refusal decides
    assert "no stored payout" in (judge(*PAYOUT_WALLET, tx(to=PAYOUT, value=1), facts(payout=None)) or "")


def test_the_fee_wallet_sends_capped_gas_to_the_payout_wallet_or_a_derived_deposit_address_only() -> None:
    assert judge(*FEE_WALLET, tx(to=PAYOUT, value=10**16), facts()) is None
    assert "above the cap" in (judge(*FEE_WALLET, tx(to=PAYOUT, value=10**16 + 1), facts()) or "")
    assert "not 0x" in (judge(*FEE_WALLET, tx(to=OTHER, value=1), facts()) or "")
    assert judge(*FEE_WALLET, tx(to=OTHER, value=1), facts(recipient_derived=True)) is None
    assert "data" in (judge(*FEE_WALLET, tx(to=PAYOUT, value=1, data=b"\x00"), facts()) or "")


def test_a_sweep_from_a_deposit_addresss_key_pays_only_the_payout_wallet() -> None:
    recorded = facts()
    assert judge(*DEPOSIT, tx(to=PAYOUT, value=9), recorded) is None
    assert judge(*DEPOSIT, tx(to=USDC, value=0, data=erc20_transfer_data(PAYOUT, 9)), recorded) is None
    assert "not 0x" in (judge(*DEPOSIT, tx(to=OTHER, value=9), recorded) or "")
    stolen = erc20_transfer_data(OTHER, 9)
    assert "not 0x" in (judge(*DEPOSIT, tx(to=USDC, value=0, data=stolen), recorded) or "")
    unknown = erc20_transfer_data(PAYOUT, 9)
    assert "known token" in (judge(*DEPOSIT, tx(to=OTHER, value=0, data=unknown), recorded) or "")


def test_keys_of_account_zero_other_than_the_two_wallets_sign_nothing() -> None:
    assert judge(0, 2, tx(to=PAYOUT), facts()) == "the key m/44'/60'/0'/0/2 signs nothing"
