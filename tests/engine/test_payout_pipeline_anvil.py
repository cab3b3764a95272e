"""The payout pipeline against a real Ethereum node (anvil) through the JSON-RPC adapter."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from appliance.engine.db import database
from appliance.engine.models import Broadcast, Payout, SignedPayload
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    Harness,
    harness_settings,
    make_harness,
    race_two_workers,
)

DEST = "0x00000000000000000000000000000000000000d1"


def anvil_harness(settings: Settings, node: Anvil, confirmations: int = 2) -> Harness:
    chains = [
        {
            "id": "eth_anvil",
            "rpc_url": node.url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": confirmations}],
        }
    ]
    settings = harness_settings(
        settings, {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
    )
    harness = make_harness(settings, lambda app: node.mine())
    harness.node = node  # type: ignore[attr-defined]
    return harness


def node_of(harness: Harness) -> Anvil:
    return harness.node  # type: ignore[attr-defined]


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.fixture
def harness(settings: Settings, node: Anvil) -> Harness:
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    return anvil_harness(settings, node)


def test_an_eth_payout_reaches_completed_and_pays_exactly_once(harness: Harness) -> None:
    harness.submit("pyo_ethpay0001", 12345)
    harness.until_status("pyo_ethpay0001", "COMPLETED")
    assert node_of(harness).balance(DEST) == 12345
    detail = harness.detail("pyo_ethpay0001")
    assert [(t["from"], t["to"]) for t in detail["transitions"]] == [
        (None, "REQUESTED"),
        ("REQUESTED", "SIGNED"),
        ("SIGNED", "BROADCAST"),
        ("BROADCAST", "COMPLETED"),
    ]
    assert [a["outcome"] for a in detail["attempts"]] == ["SENT"]
    assert detail["attempts"][0]["txHash"] == detail["txHash"]
    assert detail["broadcast"]["signedPayloadDigest"].startswith("sha256:")
    assert detail["broadcast"]["wallet"] == PAYOUT_WALLET
    assert int(detail["broadcast"]["networkFeeMinor"]) > 0
    receipt = node_of(harness).rpc("eth_getTransactionReceipt", detail["txHash"])
    assert int(receipt["status"], 16) == 1


def test_completed_waits_for_the_assets_confirmations(harness: Harness) -> None:
    harness.submit("pyo_confirm001", 1)
    harness.until_status("pyo_confirm001", "BROADCAST", mine=False)
    with database.connection_context():
        harness.pipeline.run_pass()  # mined by anvil's automine: one confirmation of two
    assert harness.payout("pyo_confirm001").status == "BROADCAST"
    node_of(harness).mine()
    harness.until_status("pyo_confirm001", "COMPLETED", mine=False, seconds=5)


def test_an_unfunded_payout_waits_with_a_reason_then_completes_once_funded(
    settings: Settings, node: Anvil
) -> None:
    harness = anvil_harness(settings, node)
    harness.submit("pyo_unfunded01", 5 * ETHER)
    with database.connection_context():
        harness.pipeline.run_pass()
    waiting = harness.detail("pyo_unfunded01")
    assert waiting["status"] == "REQUESTED"
    assert "unfunded" in waiting["reason"] and PAYOUT_WALLET in waiting["reason"]
    assert [t["to"] for t in waiting["transitions"]] == ["REQUESTED"]
    node.set_balance(PAYOUT_WALLET, 6 * ETHER)
    harness.skip_waits()
    harness.until_status("pyo_unfunded01", "COMPLETED")
    assert harness.detail("pyo_unfunded01")["reason"] is None
    assert node.balance(DEST) == 5 * ETHER


def test_an_unpayable_payout_does_not_block_the_payouts_behind_it(harness: Harness) -> None:
    harness.submit("pyo_toolarge01", 50 * ETHER)
    harness.submit("pyo_smallone01", 7)
    harness.until_status("pyo_smallone01", "COMPLETED")
    assert harness.payout("pyo_toolarge01").status == "REQUESTED"
    with database.connection_context():
        # The waiting payout holds no nonce: nothing was reserved for it.
        assert Broadcast.select().count() == 1


def test_a_reorg_before_the_confirmations_re_sends_the_same_signed_bytes(
    settings: Settings, node: Anvil
) -> None:
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    node.mine(3)  # anvil refuses a reorg deeper than the chain is high
    harness = anvil_harness(settings, node, confirmations=4)
    harness.submit("pyo_reorged001", 777)
    harness.until_status("pyo_reorged001", "BROADCAST", mine=False)
    with database.connection_context():
        harness.pipeline.run_pass()  # sees the receipt (automine) and records the block
        mined = Broadcast.get().mined_block
    assert mined is not None
    first = harness.detail("pyo_reorged001")
    node.rpc("anvil_reorg", 2, [])  # the block holding the payout is replaced by an empty one
    assert node.rpc("eth_getTransactionReceipt", first["txHash"]) is None
    harness.until_status("pyo_reorged001", "COMPLETED")
    detail = harness.detail("pyo_reorged001")
    assert ("BROADCAST", "SIGNED") in [(t["from"], t["to"]) for t in detail["transitions"]]
    assert detail["txHash"] == first["txHash"]  # the same bytes, not a new transaction
    assert {a["txHash"] for a in detail["attempts"]} == {first["txHash"]}
    assert node.balance(DEST) == 777
    with database.connection_context():
        assert SignedPayload.select().count() == 1


def test_a_transaction_stuck_below_the_market_fee_is_replaced_at_the_same_nonce(settings: Settings) -> None:
    with running_anvil(free_port(), "--no-mining") as node:
        node.set_balance(PAYOUT_WALLET, 10 * ETHER)
        harness = anvil_harness(settings, node)
        harness.submit("pyo_feebump001", 4242)
        harness.until_status("pyo_feebump001", "BROADCAST", mine=False)
        first = harness.detail("pyo_feebump001")
        node.rpc("anvil_setNextBlockBaseFeePerGas", hex(500 * 10**9))  # the market jumps
        node.mine()
        assert node.rpc("eth_getTransactionReceipt", first["txHash"]) is None
        harness.until_status("pyo_feebump001", "COMPLETED")
        detail = harness.detail("pyo_feebump001")
        assert detail["txHash"] != first["txHash"]
        assert detail["broadcast"]["signedPayloadDigest"] != first["broadcast"]["signedPayloadDigest"]
        assert detail["broadcast"]["nonce"] == first["broadcast"]["nonce"]
        assert [a["txHash"] for a in detail["attempts"] if a["outcome"] == "SENT"][-1] == detail["txHash"]
        assert node.balance(DEST) == 4242
        with database.connection_context():
            assert SignedPayload.select().count() == 2


def test_two_workers_racing_pay_each_payout_once_with_consecutive_nonces(harness: Harness) -> None:
    for n in range(6):
        harness.submit(f"pyo_racing{n:04d}", 1000 + n, destination=f"0x{0xD100 + n:040x}")
    race_two_workers(harness, [f"pyo_racing{n:04d}" for n in range(6)], seconds=40)
    for n in range(6):
        assert node_of(harness).balance(f"0x{0xD100 + n:040x}") == 1000 + n
    with database.connection_context():
        nonces = sorted(int(b.nonce) for b in Broadcast.select())
    assert nonces == list(range(6))
    assert int(node_of(harness).rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest"), 16) == 6


def test_a_wallet_used_outside_the_engine_stops_signing_with_a_reason_instead_of_skipping_ahead(
    harness: Harness,
) -> None:
    """Issue 29: skipping ahead over a nonce the engine cannot account for is how a restored copy
    paid twice; the wallet is fenced instead, and readiness says so."""
    node = node_of(harness)
    node.rpc("anvil_impersonateAccount", PAYOUT_WALLET)
    node.rpc("eth_sendTransaction", {"from": PAYOUT_WALLET, "to": FEE_WALLET, "value": hex(1)})
    node.mine()
    harness.submit("pyo_skipahead1", 9)
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
        node.mine()
    payout = harness.payout("pyo_skipahead1")
    assert payout.status == "REQUESTED"
    assert "signing for the payout wallet on eth_anvil is stopped" in (payout.reason or "")
    assert node.balance(DEST) == 0
    assert harness.app.test_client().get("/health/ready").status_code == 503


def test_a_destination_that_is_not_an_address_of_the_chain_is_400(harness: Harness) -> None:
    for bad in (
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        "0x" + "ab" * 19,
        "0x9858efFD232B4033E47d90003D41EC34EcaEda94",
    ):
        response = harness.signer.submit("pyo_baddest001", destination=bad, asset="ETH")
        assert response.status_code == 400, bad
    with database.connection_context():
        assert Payout.select().count() == 0


def test_an_asset_the_deployment_does_not_offer_is_400_before_anything_is_stored(harness: Harness) -> None:
    response = harness.signer.submit("pyo_nousdc0001", asset="USDC")
    assert response.status_code == 400
    assert "GET /v1/assets" in response.json["detail"]


def test_assets_lists_the_configured_chain_entries(harness: Harness) -> None:
    response = harness.signer.request("GET", "/v1/assets")
    assert response.status_code == 200
    assert response.json["assets"] == [
        {
            "assetId": "eth_anvil:ETH",
            "assetCode": "ETH",
            "chainId": "eth_anvil",
            "kind": "native",
            "contract": None,
            "decimals": 18,
            "networkId": NETWORK_ID,
            "confirmations": 2,
            "environment": "test",
        }
    ]


def test_payout_wallet_shows_both_wallets_with_balances_as_decimal_strings(harness: Harness) -> None:
    response = harness.signer.request("GET", "/v1/payout-wallet")
    assert response.status_code == 200
    body = response.json
    assert body["payoutWallet"] == [
        {
            "address": PAYOUT_WALLET,
            "chainId": "eth_anvil",
            "balances": [{"assetCode": "ETH", "assetId": "eth_anvil:ETH", "amountMinor": str(10 * ETHER)}],
        }
    ]
    assert body["feeWallet"][0]["address"] == FEE_WALLET
    assert body["feeWallet"][0]["balances"][0]["amountMinor"] == "0"


def test_a_usdc_payout_on_anvil_completes_with_gas_topped_up_by_the_fee_wallet(
    settings: Settings, node: Anvil
) -> None:
    from appliance.engine.chain.contracts import artifact

    minter = "0x00000000000000000000000000000000000a11ce"
    node.set_balance(minter, ETHER)
    usdc = node.deploy(artifact("usdc")["bytecode"], minter)
    mint = "0x40c10f19" + "00" * 12 + PAYOUT_WALLET[2:].lower() + f"{7_000_000:064x}"
    node.rpc("eth_sendTransaction", {"from": minter, "to": usdc, "data": mint, "gas": hex(200_000)})
    node.set_balance(FEE_WALLET, ETHER)
    node.mine()
    chains = [
        {
            "id": "eth_anvil",
            "rpc_url": node.url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [
                {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2},
                {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": usdc},
            ],
        }
    ]
    settings = harness_settings(
        settings, {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
    )
    harness = make_harness(settings, lambda app: node.mine())
    harness.submit("pyo_anvilusdc1", 2_000_000, asset="USDC", destination=DEST)
    harness.until_status("pyo_anvilusdc1", "COMPLETED", seconds=60)
    balance_of = "0x70a08231" + "00" * 12 + DEST[2:]
    assert int(node.rpc("eth_call", {"to": usdc, "data": balance_of}, "latest"), 16) == 2_000_000
    assert node.balance(PAYOUT_WALLET) > 0  # the fee wallet's top-up paid the transfer's gas
