"""The custody key: creation, loading, and the BIP39/BIP32/BIP44 derivation vectors."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from click.testing import CliRunner
from eth_account import Account

from appliance.cli import cli
from appliance.engine.custody import Custody
from appliance.engine.custody_file import create_custody_key, load_custody
from tests.engine.pipeline_harness import FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC


def test_the_standard_test_mnemonic_gives_the_well_known_first_addresses() -> None:
    custody = Custody(TEST_MNEMONIC)
    assert custody.address(0, 0) == PAYOUT_WALLET == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    assert custody.address(0, 1) == FEE_WALLET == "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"
    assert custody.address(0, 2) == "0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A"
    assert custody.fingerprint == "73c5da0a"  # the BIP32 master fingerprint of this mnemonic


def test_a_signed_transaction_recovers_to_the_derived_address_and_nothing_secret_is_printed() -> None:
    custody = Custody(TEST_MNEMONIC)
    tx = {
        "type": 2,
        "chainId": 1337,
        "nonce": 0,
        "to": FEE_WALLET,
        "value": 1,
        "data": b"",
        "gas": 21000,
        "maxFeePerGas": 2,
        "maxPriorityFeePerGas": 1,
    }
    raw, tx_hash = custody.sign_transaction(0, 0, tx)
    assert Account.recover_transaction(raw) == PAYOUT_WALLET
    assert tx_hash.startswith("0x") and len(tx_hash) == 66
    assert "abandon" not in repr(custody) and "abandon" not in str(vars(custody))


def test_custody_init_creates_a_0600_key_once_and_never_overwrites_it(tmp_path: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["custody", "init", "--data-dir", str(tmp_path), "--json"])
    assert first.exit_code == 0, first.output
    created = json.loads(first.output)
    assert created["created"] is True and len(created["fingerprint"]) == 8
    key = tmp_path / "custody.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(key.read_text().split()) == 24
    before = key.read_bytes()
    again = json.loads(runner.invoke(cli, ["custody", "init", "--data-dir", str(tmp_path), "--json"]).output)
    assert again == {"created": False, "fingerprint": created["fingerprint"], "encrypted": False}
    assert key.read_bytes() == before


def test_without_a_custody_key_there_is_no_custody_and_the_environment_takes_precedence(
    tmp_path: Path,
) -> None:
    assert load_custody(tmp_path, "") is None
    created, fingerprint = create_custody_key(tmp_path)
    assert created
    assert load_custody(tmp_path, "").fingerprint == fingerprint  # type: ignore[union-attr]
    assert load_custody(tmp_path, TEST_MNEMONIC).fingerprint == "73c5da0a"  # type: ignore[union-attr]
    assert not (tmp_path / "engine.db").exists()  # never in a database
