"""The deposit watcher against odd transfers and odd chains (issue 29, items 9 and 12)."""

from __future__ import annotations

import json

from appliance.engine.chain.contracts import artifact
from appliance.engine.db import database
from appliance.engine.models import Deposit
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, running_anvil
from tests.engine.pipeline_harness import ETHER, Harness, harness_settings, make_harness
from tests.engine.test_deposits import _mine, address_for, events, watch


def test_a_zero_value_token_transfer_is_no_deposit_and_announces_nothing(settings: Settings) -> None:
    """Anyone can emit Transfer(x, addr, 0) (transferFrom with amount 0); the spec's amountMinor
    is positive, so such a log is not a deposit."""
    harness = make_harness(harness_settings(settings, {}), _mine)
    address = address_for(harness, "customer-zero").json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("USDC", address, 0)  # a mint of 0 logs a Transfer of 0 to the address
    chain.faucet("USDC", address, 5)
    for _ in range(3):
        chain.mine()
        watch(harness)
    transfers = harness.signer.request("GET", "/v1/deposits?accountRef=customer-zero").json["transfers"]
    assert [(t["amountMinor"], t["status"]) for t in transfers] == [("5", "CONFIRMED")]
    assert [e["data"]["amountMinor"] for e in events("deposit.confirmed")] == ["5"]


def test_a_transfer_larger_than_39_digits_is_never_stored(settings: Settings) -> None:
    """amountMinor is at most 39 digits in the spec; a uint256 may hold 78: such a log is refused."""
    harness = make_harness(harness_settings(settings, {}), _mine)
    address = address_for(harness, "customer-huge").json["address"]
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("USDC", address, 10**39)  # 40 digits
    chain.faucet("USDC", address, 10**39 - 1)  # 39 digits: the largest the spec admits
    for _ in range(3):
        chain.mine()
        watch(harness)
    with database.connection_context():
        assert [r.amount_minor for r in Deposit.select()] == ["9" * 39]
    assert [e["data"]["amountMinor"] for e in events("deposit.confirmed")] == ["9" * 39]


def test_a_chain_with_only_token_assets_is_watched_and_never_stops_the_chains_after_it(
    settings: Settings,
) -> None:
    """Item 12: a chain without a native asset raised StopIteration in the watcher, which ended the
    pass for that chain and every chain after it. Both chains here are one anvil node."""
    with running_anvil(free_port()) as node:
        minter = "0x00000000000000000000000000000000000a11ce"
        node.set_balance(minter, ETHER)
        token = node.deploy(artifact("usdc")["bytecode"], minter)
        tokens_only = {
            "id": "tokens_only",
            "rpc_url": node.url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [
                {"code": "USDT", "kind": "ERC20", "decimals": 6, "confirmations": 1, "contract": token}
            ],
        }
        native = {
            "id": "native_after",
            "rpc_url": node.url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 1}],
        }
        environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps([tokens_only, native])}
        harness: Harness = make_harness(harness_settings(settings, environ), lambda app: node.mine())
        node.mine(2)
        token_address = address_for(harness, "customer-tok", "tokens_only").json["address"]
        eth_address = address_for(harness, "customer-eth", "native_after").json["address"]
        mint = "0x40c10f19" + "00" * 12 + token_address[2:].lower() + f"{4_000_000:064x}"
        node.rpc("eth_sendTransaction", {"from": minter, "to": token, "data": mint, "gas": hex(200_000)})
        node.rpc("eth_sendTransaction", {"from": minter, "to": eth_address, "value": hex(12345)})
        node.mine(2)
        watch(harness)
        watch(harness)
        tok = harness.signer.request("GET", "/v1/deposits?accountRef=customer-tok").json["transfers"]
        eth = harness.signer.request("GET", "/v1/deposits?accountRef=customer-eth").json["transfers"]
        assert [(t["assetCode"], t["amountMinor"], t["status"]) for t in tok] == [
            ("USDT", "4000000", "CONFIRMED")
        ]
        assert [(t["assetCode"], t["amountMinor"], t["status"]) for t in eth] == [
            ("ETH", "12345", "CONFIRMED")
        ]
        # Its tokens cannot be paid out (no native asset to pay the gas): refused before anything
        # is stored, instead of a payout that could never be signed.
        refused = harness.signer.submit(
            "pyo_tokenonly1", amount="5", asset="USDT", destination="0x" + "ab" * 20
        )
        assert refused.status_code == 400 and "no native asset" in refused.json["detail"]
        assert harness.signer.request("GET", "/v1/payouts/pyo_tokenonly1").status_code == 404


def test_an_unexpected_error_on_one_chain_leaves_the_pass_going_for_the_others(
    settings: Settings, monkeypatch
) -> None:
    with running_anvil(free_port()) as node:
        tables = [
            {
                "id": name,
                "rpc_url": node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 1}],
            }
            for name in ("broken_first", "fine_after")
        ]
        environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(tables)}
        harness = make_harness(harness_settings(settings, environ), lambda app: node.mine())
        node.mine(2)
        broken = address_for(harness, "customer-a", "broken_first").json["address"]
        fine = address_for(harness, "customer-b", "fine_after").json["address"]
        payer = "0x00000000000000000000000000000000000b0b00"
        node.set_balance(payer, ETHER)
        node.rpc("anvil_impersonateAccount", payer)
        for to in (broken, fine):
            node.rpc("eth_sendTransaction", {"from": payer, "to": to, "value": hex(99)})
        node.mine(2)

        def bug(number: int) -> list:
            raise RuntimeError("a bug met on this chain's data")

        monkeypatch.setattr(
            harness.app.extensions["engine"].chains.get("broken_first"), "native_transfers", bug
        )
        watch(harness)
        watch(harness)
        fine_rows = harness.signer.request("GET", "/v1/deposits?accountRef=customer-b").json["transfers"]
        assert [(t["amountMinor"], t["status"]) for t in fine_rows] == [("99", "CONFIRMED")]
        monkeypatch.undo()  # the bug fixed, the broken chain catches up from where it stood
        watch(harness)
        watch(harness)
        broken_rows = harness.signer.request("GET", "/v1/deposits?accountRef=customer-a").json["transfers"]
        assert [(t["amountMinor"], t["status"]) for t in broken_rows] == [("99", "CONFIRMED")]
