"""Deposits through the fault-injecting JSON-RPC proxy of test_payout_faulty_rpc (issue 29): a
node that lags a block behind (its head, its blocks and its logs), drops receipts, answers null,
loses requests and answers, and answers out of order. Every deposit is recorded once, CONFIRMED
once, and announced by exactly one ``deposit.confirmed``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from appliance.engine.chain.contracts import artifact
from appliance.engine.db import database
from appliance.engine.models import Deposit
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine import test_payout_faulty_rpc as faulty
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, harness_settings, make_harness
from tests.engine.test_deposits import address_for, events, watch

MINTER = "0x00000000000000000000000000000000000a11ce"
ACCOUNTS = 4


class DepositProxy(faulty.FaultyProxy):
    """The payouts' proxy, quiet while the test sets up (addresses are derived through it), and
    whose lag also reaches the reads the watcher makes: the head and the logs."""

    active = False

    def _fault(self, method: str) -> str | None:
        return super()._fault(method) if self.active else None

    def _one_block_behind(self, body: dict[str, Any]) -> dict[str, Any]:
        if body["method"] != "eth_getLogs":
            return super()._one_block_behind(body)
        head = int(
            self._forward({"jsonrpc": "2.0", "id": 0, "method": "eth_blockNumber", "params": []})["result"],
            16,
        )
        query = dict(body["params"][0])
        if int(query["toBlock"], 16) >= head:  # a node one block behind has no logs of the head yet
            query["toBlock"] = hex(head - 1)
        return {**body, "params": [query]}


@pytest.fixture(autouse=True)
def lag_reaches_the_watchers_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faulty, "LAGGING_READS", faulty.LAGGING_READS | {"eth_getLogs"})
    monkeypatch.setattr(faulty, "NULLABLE", faulty.NULLABLE | {"eth_getLogs"})


def send(node: Anvil, to: str, value: int = 0, data: str = "", contract: str = "") -> None:
    tx: dict[str, Any] = {"from": MINTER, "to": contract or to, "gas": hex(200_000)}
    if data:
        tx["data"] = data
    else:
        tx["value"] = hex(value)
    node.rpc("eth_sendTransaction", tx)


@pytest.mark.parametrize("seed", [29, 2029, 7])
def test_deposits_through_a_faulty_node_are_each_confirmed_once_with_one_event(
    settings: Settings, seed: int
) -> None:
    with running_anvil(free_port()) as node, DepositProxy(node.url, seed) as proxy:
        node.set_balance(MINTER, 10 * ETHER)
        node.rpc("anvil_impersonateAccount", MINTER)
        token = node.deploy(artifact("usdc")["bytecode"], MINTER)
        chains = [
            {
                "id": "eth_anvil",
                "rpc_url": proxy.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [
                    {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 3},
                    {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 3, "contract": token},
                ],
            }
        ]
        environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}
        harness = make_harness(harness_settings(settings, environ), lambda app: node.mine())
        addresses = [
            address_for(harness, f"customer-f{n}", "eth_anvil").json["address"] for n in range(ACCOUNTS)
        ]
        proxy.active = True
        expected = set()
        for n, address in enumerate(addresses):  # ETH and USDC to each, in blocks of their own
            send(node, address, value=1000 + n)
            expected.add(("ETH", str(1000 + n)))
            mint = "0x40c10f19" + "00" * 12 + address[2:].lower() + f"{2_000_000 + n:064x}"
            send(node, address, data=mint, contract=token)
            expected.add(("USDC", str(2_000_000 + n)))
            watch(harness)
            node.mine()
        for _ in range(200):  # passes, not seconds: a fault makes a pass retry, never wait
            watch(harness)
            node.mine()
            with database.connection_context():
                if Deposit.select().where(Deposit.status == "CONFIRMED").count() >= len(expected):
                    break
        for _ in range(5):  # and a few more: nothing may move after
            watch(harness)
            node.mine()
        assert sum(proxy.faults.values()) > 10, proxy.faults
    with database.connection_context():
        rows = [(d.asset_code, d.amount_minor, d.status) for d in Deposit.select()]
    assert sorted(rows) == sorted((code, amount, "CONFIRMED") for code, amount in expected)
    confirmed = [(e["data"]["assetCode"], e["data"]["amountMinor"]) for e in events("deposit.confirmed")]
    assert sorted(confirmed) == sorted(expected)  # one event each
    assert events("deposit.retracted") == []
