"""Issue 43, finding 4, against a real node (anvil) and a real `backup` and `restore`: the dead
host's transactions are still in the node's pool when the restored copy starts. Fencing on the
mined nonce alone let the copy sign another payout at the pool's nonce and bump it in, evicting
the original's transaction, while the original's transaction for the same payout at the next nonce
still landed: one payee paid twice, the other nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from appliance.backup import create_backup, restore_backup
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Payout, Wallet
from appliance.settings import Settings, load_settings
from tests.conftest import BACKEND, free_port
from tests.engine.anvil import Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, Harness, harness_settings, make_harness
from tests.engine.test_payout_anvil_fencing import environ

DEST_A = "0x000000000000000000000000000000000000a0a1"
DEST_B = "0x000000000000000000000000000000000000b0b2"
PAY_A, PAY_B = 3 * 10**17, 2 * 10**17


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def _nonce(node: Anvil, tag: str) -> int:
    return int(node.rpc("eth_getTransactionCount", PAYOUT_WALLET, tag), 16)


def _original_signs_b_then_a(harness: Harness, node: Anvil) -> None:
    """The original host signs B at nonce 0 (A waits for funds), then A at nonce 1; both stay in
    the pool (automine off)."""
    node.rpc("evm_setAutomine", False)
    node.set_balance(PAYOUT_WALLET, 25 * 10**16)  # enough for B only
    harness.skip_waits()
    for _ in range(3):
        harness.run_pass()
        harness.skip_waits()
    assert harness.payout("pyo_pendingb001").status == "BROADCAST"
    assert harness.payout("pyo_pendinga001").status == "REQUESTED"
    node.set_balance(PAYOUT_WALLET, ETHER)
    for _ in range(3):
        harness.run_pass()
        harness.skip_waits()
    assert harness.payout("pyo_pendinga001").status == "BROADCAST"
    assert (_nonce(node, "latest"), _nonce(node, "pending")) == (0, 2)


@pytest.mark.skipif(BACKEND != "sqlite", reason="restores SQLite files")
def test_a_restored_copy_signs_nothing_over_the_dead_hosts_pending_transactions_and_pays_nobody_twice(
    settings: Settings, dispatch_app: Any, node: Anvil, tmp_path: Path
) -> None:
    harness = make_harness(harness_settings(settings, environ(node)), lambda app: node.mine())
    harness.submit("pyo_pendinga001", PAY_A, destination=DEST_A)
    harness.submit("pyo_pendingb001", PAY_B, destination=DEST_B)
    harness.run_pass()  # the payout wallet is empty: both wait
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    _original_signs_b_then_a(harness, node)

    # The original host dies; its backup is restored and served against the same node.
    restore_backup(tmp_path / "backup", tmp_path / "restored", lambda t: load_settings({"data_dir": str(t)}))
    restored_settings = load_settings({"data_dir": str(tmp_path / "restored")}, environ={})
    restored = make_harness(
        harness_settings(restored_settings, environ(node)), lambda app: node.mine(), operator=False
    )
    # One payout a pass; a block as soon as the copy has put anything in the pool. Before: the
    # copy signed A at nonce 0, met B there, bumped its fee and evicted B; the block then held the
    # copy's A at nonce 0 and the original's A at nonce 1.
    for _ in range(12):
        with database.connection_context():
            restored.pipeline.run_pass(limit=1)
        restored.skip_waits()
        if any(restored.payout(p).status == "BROADCAST" for p in ("pyo_pendinga001", "pyo_pendingb001")):
            break
    reason = restored.payout("pyo_pendinga001").reason or ""
    node.mine()
    assert node.balance(DEST_A) == PAY_A  # once, not twice
    assert node.balance(DEST_B) == PAY_B  # paid, not evicted
    with database.connection_context():
        assert Broadcast.select().count() == 0  # the copy signed nothing
    assert "the node's pool holds transactions of" in reason and "nonces 0..1" in reason

    # Mined, the gap's transactions are found; the copy holds neither's bytes: fenced, each kept
    # for an administrator's decision, nothing taken as paid by itself.
    from appliance.engine.models import ForeignTransaction

    restored.skip_waits()
    restored.run_pass()
    with database.connection_context():
        found = {int(f.nonce): f for f in ForeignTransaction.select()}
        assert sorted(found) == [0, 1] and all(f.status == "pending" for f in found.values())
        assert Wallet.get(Wallet.address == PAYOUT_WALLET).fence_reason
        assert {p.status for p in Payout.select()} == {"REQUESTED"}

    from appliance.engine.payouts.foreign import ForeignError, adopt

    chains = restored.app.extensions["engine"].chains
    with database.connection_context():
        payout_a = Payout.get(Payout.payout_id == "pyo_pendinga001")
        payout_b = Payout.get(Payout.payout_id == "pyo_pendingb001")
        with pytest.raises(ForeignError, match="cannot be adopted"):
            adopt(chains, "eth_anvil", found[0].tx_hash, payout_a, "root", None)  # nonce 0 paid B
        first = adopt(chains, "eth_anvil", found[0].tx_hash, payout_b, "root", "the dead host's")
        assert first["walletReleased"] is False  # nonce 1 still waits
        second = adopt(chains, "eth_anvil", found[1].tx_hash, payout_a, "root", "the dead host's")
        assert second["walletReleased"] is True and second["decidedBy"] == "root"
    restored.drive(
        lambda: {restored.payout(p).status for p in ("pyo_pendinga001", "pyo_pendingb001")} == {"COMPLETED"}
    )
    for _ in range(3):
        restored.skip_waits()
        restored.run_pass()
        node.mine()
    assert (node.balance(DEST_A), node.balance(DEST_B)) == (PAY_A, PAY_B)
    assert _nonce(node, "latest") == 2


@pytest.mark.skipif(BACKEND != "sqlite", reason="restores SQLite files")
def test_a_restored_copy_signs_nothing_new_until_the_pools_transactions_at_its_own_nonces_are_mined(
    settings: Settings, dispatch_app: Any, node: Anvil, tmp_path: Path
) -> None:
    """The backup holds A signed at nonce 0 and still in the pool; the dead host may have replaced
    it there after the backup. The restored copy signs nothing new (B) until nonce 0 is mined and
    matched; then each is paid once."""
    harness = make_harness(harness_settings(settings, environ(node)), lambda app: node.mine())
    node.rpc("evm_setAutomine", False)
    node.set_balance(PAYOUT_WALLET, ETHER)
    harness.submit("pyo_pendinga002", PAY_A, destination=DEST_A)
    for _ in range(3):
        harness.run_pass()
        harness.skip_waits()
    assert harness.payout("pyo_pendinga002").status == "BROADCAST"
    harness.submit("pyo_pendingb002", PAY_B, destination=DEST_B)  # not looked at before the backup
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)

    restore_backup(tmp_path / "backup", tmp_path / "restored", lambda t: load_settings({"data_dir": str(t)}))
    restored_settings = load_settings({"data_dir": str(tmp_path / "restored")}, environ={})
    restored = make_harness(
        harness_settings(restored_settings, environ(node)), lambda app: node.mine(), operator=False
    )
    for _ in range(4):
        restored.run_pass()
        restored.skip_waits()
    payout_b = restored.payout("pyo_pendingb002")
    assert payout_b.status == "REQUESTED"  # before: signed at nonce 1 over the pool's nonce 0
    assert "restored from a backup: the node's pool holds transactions of" in (payout_b.reason or "")
    with database.connection_context():
        assert Broadcast.select().count() == 1  # A's, from the backup
    node.mine()  # nonce 0 mined: A's own bytes, which the copy holds
    restored.drive(
        lambda: {restored.payout(p).status for p in ("pyo_pendinga002", "pyo_pendingb002")} == {"COMPLETED"}
    )
    assert (node.balance(DEST_A), node.balance(DEST_B)) == (PAY_A, PAY_B)
    assert _nonce(node, "latest") == 2
