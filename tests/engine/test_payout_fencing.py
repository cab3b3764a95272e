"""Nonce fencing (issue 29): a restored or copied data directory never pays again what the chain
shows paid, and a wallet whose nonces the engine cannot account for stops signing with a reason."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from eth_utils import to_checksum_address

from appliance.backup import create_backup, read_manifest, restore_backup
from appliance.cli import cli
from appliance.engine.chain.local import LocalChain
from appliance.engine.db import database
from appliance.engine.models import Broadcast, ForeignTransaction, Wallet
from appliance.engine.outgoing.fencing import CHECKPOINTS
from appliance.settings import Settings, load_settings
from tests.conftest import BACKEND
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    drive_adopting,
    harness_settings,
    make_harness,
)

ONE_TENTH = 10**17
sqlite_only = pytest.mark.skipif(
    BACKEND != "sqlite", reason="the restore of SQLite files (PostgreSQL: test_payout_fencing_postgres)"
)


def dest(n: int) -> str:
    return f"0x{0xF000 + n:040x}"


def local_chain(harness: Harness) -> LocalChain:
    return harness.app.extensions["engine"].chains.get("eth_local")


def _mine(app: Any) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


def statuses(harness: Harness, ids: list[str]) -> list[str]:
    return [harness.payout(p).status for p in ids]


def served_against(restored_dir: Path, chain: LocalChain) -> Harness:
    """The restored data directory's engine, pointed at the ORIGINAL chain (as a copy served
    beside production against the same node would be)."""
    settings = load_settings(
        {"data_dir": str(restored_dir)}, environ={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC}
    )
    harness = make_harness(harness_settings(settings, {}), lambda app: chain.mine(), operator=False)
    harness.app.extensions["engine"].chains.chains["eth_local"] = chain
    return harness


@sqlite_only
def test_a_backup_restored_after_its_payouts_were_paid_pays_nobody_again(
    settings: Settings, dispatch_app: Any, tmp_path: Path
) -> None:
    harness = make_harness(harness_settings(settings, {}), _mine)
    chain = local_chain(harness)
    ids = [f"pyo_restored{n:03d}" for n in range(5)]
    for n, payout_id in enumerate(ids):
        harness.submit(payout_id, ONE_TENTH, destination=dest(n))
    harness.run_pass()
    assert statuses(harness, ids) == ["REQUESTED"] * 5  # the payout wallet is empty: they wait
    height = chain.head().number
    manifest = create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.skip_waits()
    harness.drive(lambda: statuses(harness, ids) == ["COMPLETED"] * 5)
    paid = {payout_id: harness.detail(payout_id)["txHash"] for payout_id in ids}

    restore_backup(tmp_path / "backup", tmp_path / "restored", lambda t: load_settings({"data_dir": str(t)}))
    restored = served_against(tmp_path / "restored", chain)
    assert statuses(restored, ids) == ["REQUESTED"] * 5  # as the backup had them
    drive_adopting(restored, lambda: statuses(restored, ids) == ["COMPLETED"] * 5)
    for _ in range(5):  # and a while longer: nothing more is signed
        restored.skip_waits()
        restored.run_pass()
        chain.mine()
    for n, payout_id in enumerate(ids):
        assert chain.balance(dest(n)) == ONE_TENTH, f"{payout_id} paid more than once"
        assert restored.payout(payout_id).tx_hash == paid[payout_id]
    with database.connection_context():
        assert Broadcast.select().count() == 5
        assert Wallet.get(Wallet.address == PAYOUT_WALLET).fence_reason is None
    assert chain.nonce(PAYOUT_WALLET) == 5
    assert manifest["chainHeights"] == {"eth_local": height}
    assert (tmp_path / "restored" / CHECKPOINTS).is_file()


@sqlite_only
def test_a_copied_data_directory_stops_signing_for_a_wallet_it_cannot_account_for(
    settings: Settings, dispatch_app: Any, tmp_path: Path
) -> None:
    """A copy taken without `appliance restore` has no chain heights: the chain's nonce ahead of
    the engine's records cannot be checked, so the wallet is fenced, named in readiness and
    metrics, and nothing is signed."""
    harness = make_harness(harness_settings(settings, {}), _mine)
    chain = local_chain(harness)
    harness.submit("pyo_copied0001", ONE_TENTH, destination=dest(1))
    harness.run_pass()
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.skip_waits()
    harness.until_status("pyo_copied0001", "COMPLETED")

    restore_backup(tmp_path / "backup", tmp_path / "copy", lambda t: load_settings({"data_dir": str(t)}))
    (tmp_path / "copy" / CHECKPOINTS).unlink()  # as a plain copy of the directory would be
    copy = served_against(tmp_path / "copy", chain)
    for _ in range(3):
        copy.skip_waits()
        copy.run_pass()
        chain.mine()
    payout = copy.payout("pyo_copied0001")
    assert payout.status == "REQUESTED"
    assert "signing for the payout wallet on eth_local is stopped" in payout.reason
    assert chain.balance(dest(1)) == ONE_TENTH
    ready = copy.app.test_client().get("/health/ready")
    assert ready.status_code == 503
    assert ready.json["checks"]["payouts:fencing"] == "fail"
    metrics = copy.app.test_client().get("/metrics")
    assert metrics.status_code == 200
    assert f'appliance_payout_wallet_fenced{{chain="eth_local",wallet="{PAYOUT_WALLET}"}} 1.0' in (
        metrics.get_data(as_text=True)
    )


@sqlite_only
def test_a_backup_records_each_chains_height_in_its_manifest(
    settings: Settings, dispatch_app: Any, tmp_path: Path
) -> None:
    harness = make_harness(harness_settings(settings, {}), _mine)
    local_chain(harness).faucet("ETH", FEE_WALLET, 1)
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    assert read_manifest(tmp_path / "backup")["chainHeights"] == {
        "eth_local": local_chain(harness).head().number
    }


def test_a_foreign_transaction_paying_a_requested_payout_is_not_taken_as_paid_until_adopted(
    settings: Settings,
) -> None:
    """Issue 44, item 5: a transaction at the gap that pays a REQUESTED payout exactly, signed
    with the key outside this engine, is not taken as that payout's (before: adopted and
    COMPLETED by itself, even for a payout awaiting approval or of a paused operator). The wallet
    is fenced and the transaction waits for an administrator; adopted, it completes the payout,
    which is never signed again, and the decision is kept (who, when, what)."""
    harness = make_harness(harness_settings(settings, {}), _mine)
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_adopted001", 4321, destination=dest(7))
    # Someone with the mnemonic pays it first (signed outside this engine).
    from appliance.engine.custody import PAYOUT_WALLET as PATH

    custody = harness.app.extensions["engine"].custody.key  # the bare key: no signer's policy
    raw, _ = custody.sign_transaction(
        *PATH,
        {
            "type": 2,
            "chainId": 1337,
            "nonce": 0,
            "to": to_checksum_address(dest(7)),
            "value": 4321,
            "data": b"",
            "gas": 21000,
            "maxFeePerGas": 10**11,
            "maxPriorityFeePerGas": 10**9,
        },
    )
    tx_hash = chain.send_raw_transaction(raw)
    chain.mine()
    with database.connection_context():
        Wallet.create(chain_id="eth_local", address=PAYOUT_WALLET, next_nonce=0, verified_block=0)
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
        chain.mine()
    payout = harness.payout("pyo_adopted001")
    assert payout.status == "REQUESTED"  # not taken as paid
    assert "whose signed bytes this engine does not hold" in (payout.reason or "")
    with database.connection_context():
        assert Broadcast.select().count() == 0
        found = ForeignTransaction.get()
        assert (found.tx_hash, found.status, found.role, found.nonce) == (tx_hash, "pending", "payout", 0)
        assert Wallet.get(Wallet.address == PAYOUT_WALLET).fence_reason

    result = CliRunner().invoke(
        cli,
        ["payout", "adopt", "--chain-id", "eth_local", "--tx", tx_hash, "--payout", "pyo_adopted001",
         "--memo", "our old host", "--yes", "--json", "--data-dir", str(settings.data_dir)],
        env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    decided = json.loads(result.output)
    assert decided["status"] == "adopted" and decided["payoutId"] == "pyo_adopted001"
    assert decided["decidedBy"] == getpass.getuser() and decided["decidedAt"]
    assert decided["note"] == "our old host" and decided["walletReleased"] is True
    harness.until_status("pyo_adopted001", "COMPLETED")
    assert chain.balance(dest(7)) == 4321
    assert chain.nonce(PAYOUT_WALLET) == 1
    with database.connection_context():
        assert Broadcast.get().tx_hash == tx_hash
        assert Wallet.get(Wallet.address == PAYOUT_WALLET).fence_reason is None


@pytest.mark.postgres
@pytest.mark.skipif(
    BACKEND != "postgres", reason="the engine on PostgreSQL (APPLIANCE_TEST_BACKEND=postgres)"
)
def test_a_backup_restored_onto_postgresql_after_its_payouts_were_paid_pays_nobody_again(
    settings: Settings, dispatch_app: Any, tmp_path: Path
) -> None:
    import itertools
    import os

    from tests.conftest import _admin, _database_url

    names = [f"rst_{os.getpid()}_{n}" for n in itertools.islice(itertools.count(), 2)]
    for name in names:
        _admin(f"CREATE DATABASE {name}")
    try:
        dispatch_url, engine_url = (_database_url(name) for name in names)
        harness = make_harness(harness_settings(settings, {}), _mine)
        chain = local_chain(harness)
        ids = [f"pyo_pgrestore{n:02d}" for n in range(5)]
        for n, payout_id in enumerate(ids):
            harness.submit(payout_id, ONE_TENTH, destination=dest(20 + n))
        harness.run_pass()
        create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
        chain.faucet("ETH", PAYOUT_WALLET, ETHER)
        harness.skip_waits()
        harness.drive(lambda: statuses(harness, ids) == ["COMPLETED"] * 5)

        target = tmp_path / "restored"
        restore_backup(
            tmp_path / "backup",
            target,
            lambda t: load_settings(
                {"data_dir": str(t), "dispatch_database": dispatch_url, "engine_database": engine_url}
            ),
        )
        # The restored install names its new databases (the backup's appliance.toml named the old).
        (target / "appliance.toml").write_text(
            f'dispatch_database = "{dispatch_url}"\nengine_database = "{engine_url}"\n'
        )
        restored = served_against(target, chain)
        assert restored.app.extensions["engine"].settings.engine_db_url == engine_url
        assert statuses(restored, ids) == ["REQUESTED"] * 5
        drive_adopting(restored, lambda: statuses(restored, ids) == ["COMPLETED"] * 5)
        for _ in range(5):
            restored.skip_waits()
            restored.run_pass()
            chain.mine()
        for n in range(5):
            assert chain.balance(dest(20 + n)) == ONE_TENTH
        assert chain.nonce(PAYOUT_WALLET) == 5
    finally:
        database.close()
        for name in names:
            _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
