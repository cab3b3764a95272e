"""A chain whose node serves another network than its settings name is refused (issue 29 item 11):
checked at start-up and again after a reconnect; no deposit is recorded and no payout signed on it,
and readiness fails with the reason."""

from __future__ import annotations

import contextlib
import json

import pytest

from appliance.engine.db import database
from appliance.engine.models import Deposit, Payout
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import ANVIL, NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, Harness, harness_settings, make_harness
from tests.engine.test_deposits import address_for, watch


def chain_table(url: str, network_id: int) -> dict:
    return {
        "id": "eth_main",
        "rpc_url": url,
        "network_id": network_id,
        "environment": "mainnet",
        "assets": [{"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 1}],
    }


def harness_on(settings: Settings, url: str, network_id: int) -> Harness:
    environ = {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps([chain_table(url, network_id)])}
    return make_harness(harness_settings(settings, environ), lambda app: None)


def chain_check(harness: Harness) -> dict:
    _, checks = harness.app.extensions["engine"].health.run(fresh=True)  # not the result kept 1 s
    return checks["chain:eth_main"]


def pay_to(node: Anvil, address: str, value: int) -> None:
    payer = "0x00000000000000000000000000000000000b0b00"
    node.set_balance(payer, ETHER)
    node.rpc("anvil_impersonateAccount", payer)
    node.rpc("eth_sendTransaction", {"from": payer, "to": address, "value": hex(value)})
    node.mine(2)


def test_a_mainnet_setting_on_a_testnet_node_records_nothing_signs_nothing_and_is_not_ready(
    settings: Settings,
) -> None:
    with running_anvil(free_port()) as node:
        harness = harness_on(settings, node.url, 1)  # the settings say mainnet; the node is 31337
        check = chain_check(harness)
        assert check["status"] == "fail"
        assert "node reports chain id 31337, settings say 1" in check["detail"]
        assert harness.signer.client.get("/health/ready").status_code == 503
        # An address made while it was refused is not possible (the head cannot be read for it) ...
        assert address_for(harness, "customer-1", "eth_main").status_code == 503
        # ... and a payout is not signed: it waits.
        node.set_balance(PAYOUT_WALLET, 10 * ETHER)
        harness.submit("pyo_wrongnet01", 1000)
        for _ in range(3):
            harness.run_pass()
        assert harness.payout("pyo_wrongnet01").status == "REQUESTED"
        assert node.rpc("eth_getTransactionCount", PAYOUT_WALLET, "latest") == "0x0"


def anvil_with_chain_id(port: int, chain_id: int) -> contextlib.AbstractContextManager[Anvil]:
    return running_anvil(port, chain_id=chain_id)


def test_a_node_replaced_by_one_of_another_network_is_refused_after_the_reconnect(settings: Settings) -> None:
    if not ANVIL.exists():
        pytest.skip("anvil is not installed")
    port = free_port()
    with anvil_with_chain_id(port, NETWORK_ID) as node:
        harness = harness_on(settings, node.url, NETWORK_ID)
        node.mine(2)
        address = address_for(harness, "customer-1", "eth_main").json["address"]
        pay_to(node, address, 111)
        watch(harness)
        assert chain_check(harness)["status"] == "pass"
        with database.connection_context():
            assert [d.amount_minor for d in Deposit.select()] == ["111"]
    # The node goes away; a node of another network answers on the same URL (a restart with the
    # wrong configuration, another backend behind a load balancer).
    watch(harness)  # a failed call: the chain is checked again at the next one
    with anvil_with_chain_id(port, 5) as testnet:
        testnet.mine(10)
        pay_to(testnet, address, 222)
        watch(harness)
        watch(harness)
        check = chain_check(harness)
        assert check["status"] == "fail" and "node reports chain id 5, settings say 31337" in check["detail"]
        with database.connection_context():
            assert [d.amount_minor for d in Deposit.select()] == ["111"]
            assert Payout.select().count() == 0
