"""Issue 44, item 8, against a real node (anvil): a payout into one of the deployment's own
deposit addresses is a deposit for that address's owner. Operator A pays a customer of operator B
on the same deployment (ETH and USDC): B's deposits are credited once confirmed and later swept.
Before, the deposit watcher dropped every transfer whose hash the engine had signed, so B's
customer never got the deposit, B's ledger stayed short and the funds were never swept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.models import Deposit, Sweep
from appliance.engine.sweeps.job import Sweeper
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import Anvil, running_anvil
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import PAYOUT_WALLET
from tests.engine.test_deposits import address_for, events, watch
from tests.engine.test_treasury_anvil import make_setup

CHAIN = "eth_anvil"
ETH_PAID, USDC_PAID = 10**17, 2_500_000


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def test_a_payout_from_operator_a_to_a_deposit_address_of_operator_b_is_bs_deposit_and_is_swept(
    settings: Settings, node: Anvil
) -> None:
    setup = make_setup(settings, node, multicall=False)
    harness = setup.harness
    bravo = make_operator(harness.app, "op_bravo0001")
    signer_b = Signer(harness.app.test_client(), bravo["operatorId"], bravo["secret"])
    customer = address_for(harness, "customer-7", CHAIN, signer=signer_b).json["address"]
    setup.mint(PAYOUT_WALLET, 10_000_000)
    node.mine()

    # Operator A (the harness's operator) pays B's customer in ETH and in USDC.
    harness.submit("pyo_tobravoeth01", ETH_PAID, destination=customer)
    harness.submit("pyo_tobravousdc1", USDC_PAID, asset="USDC", destination=customer)
    harness.drive(
        lambda: {harness.payout(p).status for p in ("pyo_tobravoeth01", "pyo_tobravousdc1")} == {"COMPLETED"},
        seconds=60,
    )
    for _ in range(4):
        node.mine()
        watch(harness)
    with database.connection_context():
        deposits = {d.asset_code: (d.operator_id, d.amount_minor, d.status) for d in Deposit.select()}
        assert deposits == {
            "ETH": ("op_bravo0001", str(ETH_PAID), "CONFIRMED"),
            "USDC": ("op_bravo0001", str(USDC_PAID), "CONFIRMED"),
        }
        bravo_books = book.balances("op_bravo0001")
        assert bravo_books[(CHAIN, "ETH")]["balance"] == ETH_PAID
        assert bravo_books[(CHAIN, "USDC")]["balance"] == USDC_PAID
        alpha_books = book.balances("op_alpha0001")
        assert alpha_books[(CHAIN, "USDC")]["paid_out"] == USDC_PAID  # A paid; B was credited
    confirmed = [e["data"] for e in events("deposit.confirmed")]
    assert sorted((e["assetCode"], e["address"]) for e in confirmed) == [
        ("ETH", customer),
        ("USDC", customer),
    ]

    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    for _ in range(40):
        with database.connection_context():
            sweeper.sweep_pass()
            done = {s.asset_code for s in Sweep.select().where(Sweep.status == "completed")}
        if done == {"ETH", "USDC"}:
            break
        node.mine()
        watch(harness)
    assert done == {"ETH", "USDC"}
    assert setup.token_balance(customer) == 0
    assert setup.token_balance(PAYOUT_WALLET) == 10_000_000  # paid out and swept back
    setup.watch_until_scanned()
    with database.connection_context():
        assert Deposit.select().count() == 2  # the sweep's gas top-up is still no deposit
