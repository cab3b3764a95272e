"""Issue 44, item 6, against a real node (anvil) and a real fee-on-transfer ERC20 (1 %, compiled
from tests/engine/contracts/fee_token.vy): a transfer that succeeded and delivered less is
COMPLETED_SHORT with what was delivered, the operator's ledger debited by what left the payout
wallet, never released to be paid again; its webhook says so. Before: FAILED, the reservation
released, and a client retrying the FAILED payout paid twice."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.models import Broadcast, WebhookEvent
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.contracts.compile import artifact
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET, harness_settings, make_harness

DEPLOYER = "0x00000000000000000000000000000000000fee01"
DESTS = [f"0x{0xE100 + n:040x}" for n in range(3)]
AMOUNTS = [10_000_000, 12_345_678, 7_000_001]  # 1 % of each, rounded down, stays with the token


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def _balance_of(node: Anvil, token: str, holder: str) -> int:
    data = "0x70a08231" + "00" * 12 + holder[2:].lower()
    return int(node.rpc("eth_call", {"to": token, "data": data}, "latest"), 16)


def test_three_payouts_of_a_fee_on_transfer_token_are_completed_short_and_never_paid_again(
    settings: Settings, node: Anvil
) -> None:
    node.set_balance(DEPLOYER, ETHER)
    token = node.deploy(artifact("fee_token")["bytecode"], DEPLOYER)
    mint = "0x40c10f19" + "00" * 12 + PAYOUT_WALLET[2:].lower() + f"{50_000_000:064x}"
    node.rpc("eth_sendTransaction", {"from": DEPLOYER, "to": token, "data": mint, "gas": hex(200_000)})
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
                {"code": "FOT", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": token},
            ],
        }
    ]
    environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
    harness = make_harness(harness_settings(settings, environ), lambda app: node.mine())
    operator = harness.signer.operator_id
    with database.connection_context(), write_transaction(database):
        book.adjust(operator, "eth_anvil", "FOT", sum(AMOUNTS), memo="prefunded", actor="test")
    ids = [f"pyo_feeontransfer{n}" for n in range(3)]
    for payout_id, dest, amount in zip(ids, DESTS, AMOUNTS, strict=True):
        harness.submit(payout_id, amount, asset="FOT", destination=dest)
    harness.drive(
        lambda: all(harness.payout(p).status not in ("REQUESTED", "SIGNED", "BROADCAST") for p in ids)
    )

    for payout_id, dest, amount in zip(ids, DESTS, AMOUNTS, strict=True):
        delivered = amount - amount // 100
        assert _balance_of(node, token, dest) == delivered
        detail = harness.detail(payout_id)
        assert detail["status"] == "COMPLETED_SHORT", detail
        assert (detail["deliveredMinor"], detail["debitedMinor"]) == (str(delivered), str(amount))
        assert f"move {delivered} of {amount}" in detail["reason"]
        assert [t["to"] for t in detail["transitions"]][-1] == "COMPLETED_SHORT"
    assert _balance_of(node, token, PAYOUT_WALLET) == 50_000_000 - sum(AMOUNTS)

    with database.connection_context():
        # The ledger is debited by what left the payout wallet: nothing released, nothing in flight.
        accounts = book.balances(operator)[("eth_anvil", "FOT")]
        assert (accounts["balance"], accounts["in_flight"], accounts["paid_out"]) == (0, 0, sum(AMOUNTS))
        events = [
            json.loads(e.payload)["data"]
            for e in WebhookEvent.select().where(WebhookEvent.event_type == "payout.completed")
        ]
        assert sorted((e["payoutId"], e["status"], e["deliveredMinor"]) for e in events) == [
            (p, "COMPLETED_SHORT", str(a - a // 100)) for p, a in zip(ids, AMOUNTS, strict=True)
        ]
        assert not WebhookEvent.select().where(WebhookEvent.event_type == "payout.failed").exists()
        sent = Broadcast.select().where(Broadcast.purpose == "payout").count()

    # A client retrying (the same payoutId and key) is answered the outcome; nothing is signed again.
    for payout_id, dest, amount in zip(ids, DESTS, AMOUNTS, strict=True):
        again = harness.signer.submit(payout_id, amount=str(amount), asset="FOT", destination=dest)
        assert again.status_code == 200 and again.json["outcome"] == "REPLAYED"
        assert again.json["status"] == "COMPLETED_SHORT"
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
        node.mine()
    with database.connection_context():
        assert Broadcast.select().where(Broadcast.purpose == "payout").count() == sent == 3
    for dest, amount in zip(DESTS, AMOUNTS, strict=True):
        assert _balance_of(node, token, dest) == amount - amount // 100


def test_the_committed_fee_token_bytecode_is_its_source_compiled() -> None:
    pytest.importorskip("vyper")
    from tests.engine.contracts.compile import compile_contract

    assert compile_contract("fee_token") == artifact("fee_token")
