"""Sweeps of deposit addresses into the payout wallet against a real node (anvil)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from appliance.engine.db import database
from appliance.engine.ledger.service import balance
from appliance.engine.models import Deposit, Sweep
from appliance.engine.sweeps.job import Sweeper
from appliance.engine.treasury.positions import all_positions
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import Anvil, running_anvil
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET
from tests.engine.test_deposits import address_for, watch
from tests.engine.test_treasury_anvil import make_setup

CHAIN = "eth_anvil"


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def _sweeps() -> list[Sweep]:
    with database.connection_context():
        return list(Sweep.select().order_by(Sweep.id))


@pytest.mark.parametrize("multicall", [True, False], ids=["multicall3", "batched-rpc"])
def test_eth_and_usdc_deposits_are_swept_on_anvil_and_the_treasury_equals_the_chain(
    settings: Settings, node: Anvil, multicall: bool
) -> None:
    setup = make_setup(settings, node, multicall=multicall)
    harness = setup.harness
    eth_only = address_for(harness, "eth-only", CHAIN).json["address"]
    usdc_only = address_for(harness, "usdc-only", CHAIN).json["address"]
    both = address_for(harness, "both", CHAIN).json["address"]
    setup.send_eth(eth_only, ETHER // 4)
    setup.mint(usdc_only, 7_000_000)
    setup.send_eth(both, ETHER // 100)
    setup.mint(both, 3_000_000)
    for _ in range(4):
        node.mine()
        watch(harness)
    with database.connection_context():
        assert Deposit.select().where(Deposit.status == "CONFIRMED").count() == 4
        before = balance("op_alpha0001")
    payout_eth = node.balance(PAYOUT_WALLET)
    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    for _ in range(40):
        with database.connection_context():
            sweeper.sweep_pass()
        done = [s for s in _sweeps() if s.status == "completed"]
        if len(done) == 4:
            break
        node.mine()
        watch(harness)
    swept = {(s.address, s.asset_code): s for s in _sweeps()}
    assert {k: s.status for k, s in swept.items()} == {
        (eth_only, "ETH"): "completed",
        (usdc_only, "USDC"): "completed",
        (both, "USDC"): "completed",
        (both, "ETH"): "completed",
    }
    assert setup.token_balance(PAYOUT_WALLET) == 10_000_000
    assert setup.token_balance(usdc_only) == setup.token_balance(both) == 0
    assert swept[(usdc_only, "USDC")].topup_id is not None
    assert swept[(both, "USDC")].topup_id is None  # its own ETH paid the token's gas
    eth_in = int(swept[(eth_only, "ETH")].amount_minor) + int(swept[(both, "ETH")].amount_minor)
    assert node.balance(PAYOUT_WALLET) == payout_eth + eth_in
    setup.watch_until_scanned()
    with database.connection_context():
        assert balance("op_alpha0001") == before  # no operator's ledger moved
        assert Deposit.select().count() == 4  # the top-up was not taken for a deposit
        positions = all_positions(setup.runtime.chains, setup.runtime.custody)
    for p in positions:
        if p.role == "deposit":
            assert p.on_chain == p.expected, p
    assert setup.reconcile()["findings"] == []
