"""Reorgs deeper than the watcher's old 128 kept block hashes (issue 29 item 10) on anvil, and the
settings the watcher cannot honour refused at start-up."""

from __future__ import annotations

import json

import pytest

from appliance.engine.deposits import watcher as watcher_module
from appliance.settings import Settings, SettingsError, load_settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, Harness, harness_settings, make_harness
from tests.engine.test_deposits import address_for, events, watch


def anvil_chain(node: Anvil, confirmations: int) -> dict:
    return {
        "id": "eth_anvil",
        "rpc_url": node.url,
        "network_id": NETWORK_ID,
        "environment": "test",
        "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": confirmations}],
    }


def harness_for(
    settings: Settings, node: Anvil, confirmations: int, extra: dict[str, str] | None = None
) -> Harness:
    """``extra``: more APPLIANCE_* settings (an engine database on PostgreSQL, say)."""
    environ = {
        "APPLIANCE_LOCAL_CHAIN": "0",
        "APPLIANCE_CHAINS": json.dumps([anvil_chain(node, confirmations)]),
        **(extra or {}),
    }
    return make_harness(harness_settings(settings, environ), lambda app: node.mine())


def deposit(node: Anvil, address: str, value: int) -> str:
    payer = "0x00000000000000000000000000000000000b0b00"
    node.set_balance(payer, ETHER)
    node.rpc("anvil_impersonateAccount", payer)
    return node.rpc("eth_sendTransaction", {"from": payer, "to": address, "value": hex(value)})


def watch_until_caught_up(harness: Harness, node: Anvil) -> None:
    head = int(node.rpc("eth_blockNumber"), 16)
    for _ in range(1 + head // 200 + 2):  # the watcher scans up to 200 blocks a pass
        watch(harness)


def transfers(harness: Harness, account: str) -> list[tuple[str, str]]:
    body = harness.signer.request("GET", f"/v1/deposits?accountRef={account}").json
    return [(t["amountMinor"], t["status"]) for t in body["transfers"]]


def test_a_reorg_deeper_than_128_blocks_under_200_confirmations_retracts_the_pending_deposit(
    settings: Settings,
) -> None:
    with running_anvil(free_port()) as node:
        harness = harness_for(settings, node, 200)
        node.mine(20)
        address = address_for(harness, "customer-deep", "eth_anvil").json["address"]
        deposit(node, address, 4242)  # automined
        node.mine(140)  # 141 deep: PENDING, needs 200
        watch_until_caught_up(harness, node)
        assert transfers(harness, "customer-deep") == [("4242", "PENDING")]
        node.rpc("anvil_reorg", 150, [])  # its block, and 149 more, replaced by empty blocks
        node.mine(100)  # the old block would be 241 deep now
        watch_until_caught_up(harness, node)
        assert transfers(harness, "customer-deep") == [("4242", "RETRACTED")]
        assert events("deposit.confirmed") == []


def test_a_reorg_below_every_kept_block_hash_still_retracts_a_confirmed_deposit(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer hashes kept than the reorg is deep (anvil finalizes 64 blocks behind its head, and
    this reorg ignores that): the recorded deposits below are checked by their block hashes."""
    monkeypatch.setattr(watcher_module, "REORG_WINDOW", 4)
    with running_anvil(free_port()) as node:
        harness = harness_for(settings, node, 2)
        node.mine(20)
        address = address_for(harness, "customer-deeper", "eth_anvil").json["address"]
        tx_hash = deposit(node, address, 777)
        node.mine(80)
        watch_until_caught_up(harness, node)
        assert transfers(harness, "customer-deeper") == [("777", "CONFIRMED")]
        node.rpc("anvil_reorg", 90, [])
        node.mine(3)
        watch_until_caught_up(harness, node)
        assert transfers(harness, "customer-deeper") == [("777", "RETRACTED")]
        [retracted] = events("deposit.retracted")
        assert retracted["data"]["txHash"] == tx_hash


def test_more_confirmations_than_the_watcher_checks_stop_start_up_naming_the_setting(
    settings: Settings,
) -> None:
    table = {
        "id": "eth_slow",
        "rpc_url": "http://127.0.0.1:1",
        "network_id": 1,
        "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 10_001}],
    }
    with pytest.raises(SettingsError, match=r"chains\[0\]\.assets\[0\]\.confirmations"):
        load_settings({"data_dir": str(settings.data_dir)}, environ={"APPLIANCE_CHAINS": json.dumps([table])})
    with pytest.raises(SettingsError, match="local_confirmations"):
        load_settings(
            {"data_dir": str(settings.data_dir)}, environ={"APPLIANCE_LOCAL_CONFIRMATIONS": "20000"}
        )
    table["assets"][0]["confirmations"] = 10_000  # type: ignore[index]
    load_settings({"data_dir": str(settings.data_dir)}, environ={"APPLIANCE_CHAINS": json.dumps([table])})


DEV_ACCOUNT = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"  # anvil's first unlocked account


def test_a_deposit_the_new_chain_holds_below_every_kept_hash_is_found_after_a_deep_reorg(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reorg below every kept hash: the rescan must start above the highest recorded transfer
    whose block still holds, not just below the lowest that does not (the blocks in between may
    hold transfers of the new chain that were never seen)."""
    monkeypatch.setattr(watcher_module, "REORG_WINDOW", 4)
    with running_anvil(free_port()) as node:
        harness = harness_for(settings, node, 2)
        node.mine(20)
        address = address_for(harness, "customer-gap", "eth_anvil").json["address"]
        deposit(node, address, 111)  # block 21: stays canonical
        node.mine(30)
        deposit(node, address, 222)  # block 52: replaced by the reorg
        node.mine(40)  # head 92
        watch_until_caught_up(harness, node)
        assert sorted(transfers(harness, "customer-gap")) == [("111", "CONFIRMED"), ("222", "CONFIRMED")]
        # Blocks 33..92 replaced; the new chain pays 333 in block 38, below the replaced 222.
        node.rpc(
            "anvil_reorg",
            60,
            [[{"from": DEV_ACCOUNT, "to": address, "value": hex(333)}, 5]],
        )
        node.mine(3)
        watch_until_caught_up(harness, node)
        assert sorted(transfers(harness, "customer-gap")) == [
            ("111", "CONFIRMED"),
            ("222", "RETRACTED"),
            ("333", "CONFIRMED"),
        ]
        assert [e["data"]["amountMinor"] for e in events("deposit.retracted")] == ["222"]
        assert sorted(e["data"]["amountMinor"] for e in events("deposit.confirmed")) == ["111", "222", "333"]
