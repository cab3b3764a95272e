"""Issue 29 against a real node (anvil): the restore double-pay, gas estimates that revert, ETH to
a smart-contract wallet, and tokens that return false or take a fee."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from appliance.backup import create_backup, restore_backup
from appliance.engine.chain.rpc import TRANSFER_TOPIC
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Wallet
from appliance.engine.outgoing.fencing import SCAN_BLOCKS
from appliance.engine.outgoing.transactions import decode_call, erc20_transfer_data
from appliance.settings import Settings, load_settings
from tests.conftest import BACKEND, free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    Harness,
    drive_adopting,
    harness_settings,
    make_harness,
)

# Hand-assembled runtime code (no compiler needed), installed with anvil_setCode.
# Any call of 36 bytes (balanceOf) answers 2^256 - 1; a call of 68 bytes (transfer) jumps to 0x30.
_HEAD = "36604414603057" + "7f" + "ff" * 32 + "600052" + "60206000f3" + "5b"
REVERTS = _HEAD + "600080fd"  # transfer reverts (a blacklisted destination)
RETURNS_FALSE = _HEAD + "60206000f3"  # transfer returns false and logs nothing
TAKES_ONE = (  # transfer logs Transfer(caller, to, amount - 1) and returns true
    _HEAD
    + "600160243503600052"  # memory[0] = calldataload(36) - 1
    + "60043533"  # topics: to, caller
    + "7f"
    + TRANSFER_TOPIC.removeprefix("0x")
    + "60206000a3"  # LOG3(memory[0:32], Transfer, caller, to)
    + "600160005260206000f3"  # return true
)
STORES_ON_RECEIPT = "600160005500"  # a wallet contract that writes a slot when paid (> 21,000 gas)

TOKEN = "0x00000000000000000000000000000000000070c0"
DEST = "0x00000000000000000000000000000000000000d2"


def chains_config(node: Anvil, token: str | None = None) -> str:
    assets: list[dict[str, Any]] = [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2}]
    if token:
        assets.append({"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": token})
    return json.dumps(
        [
            {
                "id": "eth_anvil",
                "rpc_url": node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": assets,
            }
        ]
    )


def environ(node: Anvil, token: str | None = None) -> dict[str, str]:
    return {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": chains_config(node, token)}


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def token_harness(settings: Settings, node: Anvil, runtime: str) -> Harness:
    node.rpc("anvil_setCode", TOKEN, "0x" + runtime)
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    return make_harness(harness_settings(settings, environ(node, TOKEN)), lambda app: node.mine())


def test_a_token_payout_whose_gas_estimate_reverts_fails_with_the_reason_instead_of_retrying(
    settings: Settings, node: Anvil
) -> None:
    harness = token_harness(settings, node, REVERTS)
    harness.submit("pyo_blacklist1", 1_000_000, asset="USDC", destination=DEST)
    harness.until_status("pyo_blacklist1", "FAILED", seconds=20)
    reason = harness.payout("pyo_blacklist1").reason or ""
    assert "would revert" in reason and "nothing was signed or paid" in reason
    with database.connection_context():
        assert Broadcast.select().count() == 0


def test_a_token_that_returns_false_is_not_reported_as_paid(settings: Settings, node: Anvil) -> None:
    harness = token_harness(settings, node, RETURNS_FALSE)
    harness.submit("pyo_false00001", 1_000_000, asset="USDC", destination=DEST)
    harness.until_status("pyo_false00001", "FAILED", seconds=30)
    assert "move 0 of 1000000" in (harness.payout("pyo_false00001").reason or "")


def test_a_token_that_takes_a_fee_on_transfer_is_not_reported_as_paid_in_full(
    settings: Settings, node: Anvil
) -> None:
    harness = token_harness(settings, node, TAKES_ONE)
    harness.submit("pyo_feetoken01", 1_000_000, asset="USDC", destination=DEST)
    harness.until_status("pyo_feetoken01", "COMPLETED_SHORT", seconds=30)
    assert "move 999999 of 1000000" in (harness.payout("pyo_feetoken01").reason or "")
    assert harness.detail("pyo_feetoken01")["deliveredMinor"] == "999999"


def test_an_eth_payout_to_a_smart_contract_wallet_gets_the_gas_it_needs(
    settings: Settings, node: Anvil
) -> None:
    node.rpc("anvil_setCode", DEST, "0x" + STORES_ON_RECEIPT)
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    harness = make_harness(harness_settings(settings, environ(node)), lambda app: node.mine())
    harness.submit("pyo_safe000001", 12345, destination=DEST)
    harness.until_status("pyo_safe000001", "COMPLETED", seconds=30)
    assert node.balance(DEST) == 12345
    with database.connection_context():
        assert int(Broadcast.get().gas_limit) > 21_000


@pytest.mark.skipif(BACKEND != "sqlite", reason="restores SQLite files")
def test_a_backup_restored_and_served_against_the_same_node_pays_nobody_again(
    settings: Settings, dispatch_app: Any, node: Anvil, tmp_path: Path
) -> None:
    harness = make_harness(harness_settings(settings, environ(node)), lambda app: node.mine())
    ids = [f"pyo_anvilrst{n:02d}" for n in range(5)]
    dests = [f"0x{0xD200 + n:040x}" for n in range(5)]
    for payout_id, to in zip(ids, dests, strict=True):
        harness.submit(payout_id, 10**17, destination=to)
    harness.run_pass()  # the payout wallet is empty: all wait
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    node.set_balance(PAYOUT_WALLET, ETHER)
    harness.skip_waits()
    harness.drive(lambda: all(harness.payout(p).status == "COMPLETED" for p in ids))

    restore_backup(tmp_path / "backup", tmp_path / "restored", lambda t: load_settings({"data_dir": str(t)}))
    restored_settings = load_settings({"data_dir": str(tmp_path / "restored")}, environ={})
    restored = make_harness(
        harness_settings(restored_settings, environ(node)), lambda app: node.mine(), operator=False
    )
    drive_adopting(restored, lambda: all(restored.payout(p).status == "COMPLETED" for p in ids))
    for _ in range(5):
        restored.skip_waits()
        restored.run_pass()
        node.mine()
    for to in dests:
        assert node.balance(to) == 10**17  # once, not 0.2 ETH
    assert int(node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == 5


@pytest.mark.skipif(BACKEND != "sqlite", reason="restores SQLite files")
def test_a_restore_far_behind_the_chain_matches_its_history_over_several_passes_and_pays_nobody_twice(
    settings: Settings, dispatch_app: Any, tmp_path: Path
) -> None:
    # --prune-history: anvil keeps no state per block, so mining a thousand blocks stays quick.
    with running_anvil(free_port(), "--prune-history") as node:
        _restore_far_behind(settings, node, tmp_path)


def _restore_far_behind(settings: Settings, node: Anvil, tmp_path: Path) -> None:
    harness = make_harness(harness_settings(settings, environ(node)), lambda app: node.mine())
    ids = [f"pyo_anvilfar{n:02d}" for n in range(3)]
    dests = [f"0x{0xD300 + n:040x}" for n in range(3)]
    for payout_id, to in zip(ids, dests, strict=True):
        harness.submit(payout_id, 10**17, destination=to)
    harness.run_pass()  # the payout wallet is empty: all wait
    create_backup(harness.app.extensions["engine"].settings, tmp_path / "backup", sealer=None)
    for _ in range(10):  # the backup is a thousand blocks behind when the payouts are paid
        node.mine(100)
    node.set_balance(PAYOUT_WALLET, ETHER)
    harness.skip_waits()
    harness.drive(lambda: all(harness.payout(p).status == "COMPLETED" for p in ids))
    node.mine(3)

    restore_backup(tmp_path / "backup", tmp_path / "restored", lambda t: load_settings({"data_dir": str(t)}))
    restored_settings = load_settings({"data_dir": str(tmp_path / "restored")}, environ={})
    restored = make_harness(
        harness_settings(restored_settings, environ(node)), lambda app: node.mine(), operator=False
    )
    cursors = []
    for _ in range(200):
        restored.skip_waits()
        restored.run_pass()
        with database.connection_context():
            wallet = Wallet.get_or_none(Wallet.address == PAYOUT_WALLET)
        if wallet is None or wallet.scan_block is None or wallet.fence_reason:
            break  # matched, or reached the copy's transactions (their bytes are not held here)
        cursors.append(int(wallet.scan_block))
        reason = restored.payout(ids[0]).reason or ""
        assert f"checking the wallet's history on chain: block {cursors[-1]} of " in reason
        assert restored.payout(ids[0]).status == "REQUESTED"
    # At most SCAN_BLOCKS a pass: 1000 blocks take several passes, each resuming where the last
    # ended (before: one pass read them all, from the backup's height, inside one lease).
    assert len(cursors) >= 4  # 1000 blocks at 128 a pass: 7 passes end short of the head
    assert cursors == sorted(cursors) and len(set(cursors)) == len(cursors)
    assert all(b - a <= SCAN_BLOCKS for a, b in itertools.pairwise(cursors))
    drive_adopting(restored, lambda: all(restored.payout(p).status == "COMPLETED" for p in ids))
    for _ in range(3):
        restored.skip_waits()
        restored.run_pass()
        node.mine()
    for to in dests:
        assert node.balance(to) == 10**17  # once, not 0.2 ETH
    assert int(node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == 3


FULL = (  # a plain token: transfer logs Transfer(caller, to, amount) and returns true
    _HEAD
    + "602435600052"
    + "60043533"
    + "7f"
    + TRANSFER_TOPIC.removeprefix("0x")
    + "60206000a3"
    + "600160005260206000f3"
)
GWEI = 10**9


def ceiling_environ(node: Anvil, ceiling: int, token: str | None = None) -> dict[str, str]:
    config = json.loads(chains_config(node, token))
    config[0]["max_fee_per_gas"] = ceiling
    return {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(config)}


def test_a_payout_waits_with_a_reason_while_the_fee_is_above_the_chains_ceiling(
    settings: Settings, node: Anvil
) -> None:
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    harness = make_harness(
        harness_settings(settings, ceiling_environ(node, 50 * GWEI)), lambda app: node.mine()
    )
    node.rpc("anvil_setNextBlockBaseFeePerGas", hex(200 * GWEI))
    node.mine()
    harness.submit("pyo_ceiling001", 777, destination=DEST)
    harness.run_pass()
    payout = harness.payout("pyo_ceiling001")
    assert payout.status == "REQUESTED"
    assert "above its max_fee_per_gas" in (payout.reason or "")
    node.rpc("anvil_setNextBlockBaseFeePerGas", hex(GWEI))
    node.mine()
    harness.skip_waits()
    harness.until_status("pyo_ceiling001", "COMPLETED")
    with database.connection_context():
        assert int(Broadcast.get().max_fee_per_gas) <= 50 * GWEI


def test_a_gas_top_up_is_sized_at_the_current_base_fee_not_the_spiked_maximum(
    settings: Settings, node: Anvil
) -> None:
    node.rpc("anvil_setCode", TOKEN, "0x" + FULL)
    node.set_balance(FEE_WALLET, 100 * ETHER)
    harness = make_harness(harness_settings(settings, environ(node, TOKEN)), lambda app: node.mine())
    node.rpc("anvil_setNextBlockBaseFeePerGas", hex(100 * GWEI))
    node.mine()
    harness.submit("pyo_topupsize1", 5, asset="USDC", destination=DEST)
    harness.run_pass()
    with database.connection_context():
        topup = Broadcast.get(Broadcast.purpose == "gas_topup")
    _to, value, _data = decode_call(topup)
    payload_max = int(topup.max_fee_per_gas)  # 2 x base + tip at signing
    chain = harness.app.extensions["engine"].chains.get("eth_anvil")
    gas = chain.estimate_gas(PAYOUT_WALLET, TOKEN, 0, erc20_transfer_data(DEST, 5)) * 13 // 10
    # 50 payouts' gas at the base fee and tip (about half the doubled maximum), not at the maximum.
    assert value < 50 * gas * payload_max * 6 // 10
    assert value >= 50 * gas * (payload_max // 2)


def test_a_gas_top_up_below_a_risen_base_fee_is_replaced_at_its_nonce(settings: Settings) -> None:
    with running_anvil(free_port(), "--no-mining") as node:
        node.rpc("anvil_setCode", TOKEN, "0x" + FULL)
        node.set_balance(FEE_WALLET, 100 * ETHER)
        node.mine()
        harness = make_harness(harness_settings(settings, environ(node, TOKEN)), lambda app: node.mine())
        harness.submit("pyo_topupbump1", 5, asset="USDC", destination=DEST)
        harness.run_pass()  # signs the fee wallet's top-up
        harness.run_pass()  # sends it
        with database.connection_context():
            first = Broadcast.get(Broadcast.purpose == "gas_topup").tx_hash
        node.rpc("anvil_setNextBlockBaseFeePerGas", hex(500 * GWEI))  # the market jumps
        node.mine()
        assert node.rpc("eth_getTransactionReceipt", first) is None
        harness.skip_waits()
        harness.until_status("pyo_topupbump1", "COMPLETED", seconds=60)
        with database.connection_context():
            topup = Broadcast.get(Broadcast.purpose == "gas_topup")
        assert topup.tx_hash != first
        assert int(node.rpc("eth_getTransactionCount", FEE_WALLET, "latest"), 16) >= 1
