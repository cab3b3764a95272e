"""Solvency per asset (issue 44, item 10) against anvil: what operators are owed against what
custody holds, the deployment's own costs, and each unlimited operator's exposure, with its
optional ceiling refused at submission."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.db import database
from appliance.engine.ledger.service import set_limits
from appliance.engine.sweeps.job import Sweeper
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import Anvil, running_anvil
from tests.engine.books import CHAIN, Books, make_books
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC
from tests.engine.test_deposits import address_for

SPENDER = "op_spender001"


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.fixture
def books(settings: Settings, node: Anvil) -> Books:
    books = make_books(settings, node)
    node.set_balance(PAYOUT_WALLET, 0)  # the deployment funded nothing: custody is the deposits
    node.set_balance(FEE_WALLET, 0)
    return books


def _spender(books: Books) -> Signer:
    op = make_operator(books.harness.app, SPENDER)
    return Signer(books.harness.app.test_client(), op["operatorId"], op["secret"])


def _eth(report: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in report["solvency"] if s["assetCode"] == "ETH")


def _sweep_all(books: Books) -> None:
    sweeper = Sweeper(books.runtime.chains, books.runtime.custody)
    for _ in range(20):
        with database.connection_context():
            sweeper.sweep_pass()
        books.settle(1)
        from appliance.engine.models import Sweep

        with database.connection_context():
            if Sweep.select().where(Sweep.status == "completed").exists():
                return
    pytest.fail("the sweep did not complete")


def test_an_unlimited_operator_paying_out_pooled_deposits_is_a_shortfall_with_its_exposure(
    books: Books, settings: Settings
) -> None:
    customer = address_for(books.harness, "customer-solvent", CHAIN).json["address"]
    books.send_eth(customer, ETHER)
    books.settle(4)
    report = books.reconcile()
    assert report["findings"] == []
    assert _eth(report) == {
        "chainId": CHAIN,
        "assetCode": "ETH",
        "owedMinor": str(ETHER),
        "inFlightMinor": "0",
        "heldMinor": str(ETHER),
        "shortfallMinor": "0",
        "deploymentCostsMinor": "0",
        "exposures": [],
    }
    # The sweep's fee belongs to no operator: custody now holds less than the operator is owed,
    # by exactly the deployment's cost.
    _sweep_all(books)
    books.settle()
    report = books.reconcile()
    eth = _eth(report)
    fee = int(eth["deploymentCostsMinor"])
    assert fee > 0 and eth["shortfallMinor"] == str(fee) and eth["heldMinor"] == str(ETHER - fee)
    assert [f["kind"] for f in report["findings"]] == ["solvency_shortfall"]
    # Another operator, unlimited (the default) and with nothing deposited, pays out of the pool.
    spender = _spender(books)
    response = spender.submit(
        "pyo_pooled0001", amount=str(ETHER // 2), asset="ETH", destination="0x" + "ab" * 20
    )
    assert response.status_code == 201, response.json
    books.harness.pipeline.run_pass()
    for _ in range(30):
        books.harness.run_pass()
        books.node.mine()
        if books.harness.payout("pyo_pooled0001").status == "COMPLETED":
            break
    assert books.harness.payout("pyo_pooled0001").status == "COMPLETED"
    books.settle()
    report = books.reconcile()
    eth = _eth(report)
    [exposure] = eth["exposures"]
    assert exposure["operatorId"] == SPENDER and exposure["ceilingMinor"] is None
    assert int(exposure["exposureMinor"]) > ETHER // 2  # the amount and its network fee
    assert int(eth["shortfallMinor"]) == int(exposure["exposureMinor"]) + fee
    shortfall = next(f for f in report["findings"] if f["kind"] == "solvency_shortfall")
    assert SPENDER in shortfall["detail"]
    # `appliance treasury` shows the exposure too.
    result = CliRunner().invoke(
        cli,
        ["treasury", "--json", "--data-dir", str(settings.data_dir)],
        env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **books.environ},
        catch_exceptions=False,
    )
    assert json.loads(result.output)["exposures"] == [{"chainId": CHAIN, "assetCode": "ETH", **exposure}]


def test_a_payout_beyond_the_operators_exposure_ceiling_is_refused_at_submission(books: Books) -> None:
    spender = _spender(books)
    with database.connection_context():
        controls = set_limits(SPENDER, CHAIN, "ETH", {"exposure_ceiling_minor": str(ETHER)})
    assert controls["limits"][0]["exposureCeilingMinor"] == str(ETHER)
    first = spender.submit(
        "pyo_ceiling0001", amount=str(ETHER * 6 // 10), asset="ETH", destination="0x" + "ab" * 20
    )
    assert first.status_code == 201, first.json
    # The first is only requested, not reserved yet: it counts all the same.
    second = spender.submit(
        "pyo_ceiling0002", amount=str(ETHER * 6 // 10), asset="ETH", destination="0x" + "ab" * 20
    )
    assert second.status_code == 400
    assert second.json["errors"] == [
        {"field": "amountMinor", "message": "above the operator's exposure ceiling"}
    ]
    assert "exposure ceiling" in second.json["detail"]
    smaller = spender.submit(
        "pyo_ceiling0003", amount=str(ETHER * 4 // 10), asset="ETH", destination="0x" + "ab" * 20
    )
    assert smaller.status_code == 201, smaller.json
