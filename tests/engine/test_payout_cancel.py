"""`appliance payout cancel|status|unfence` (issue 29): a stuck payout's nonce is taken by a
zero-value self-transfer and the payout is FAILED only once that lands."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.chain.local import LocalChain
from appliance.engine.db import database
from appliance.engine.models import Wallet
from appliance.settings import Settings
from tests.engine.pipeline_harness import (
    ETHER,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)


def dest(n: int) -> str:
    return f"0x{0xC000 + n:040x}"


def _mine(app: Any) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


def local_chain(harness: Harness) -> LocalChain:
    return harness.app.extensions["engine"].chains.get("eth_local")


def appliance(harness: Harness, *args: str) -> Any:
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    result = CliRunner().invoke(
        cli, [*args, "--data-dir", data_dir, "--json"], env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC}
    )
    return result


def test_cancelling_a_broadcast_payout_fails_it_only_once_the_self_transfer_lands(harness: Harness) -> None:
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_cancel0001", 3131, destination=dest(1))
    harness.until_status("pyo_cancel0001", "BROADCAST", mine=False)
    result = appliance(harness, "payout", "cancel", "pyo_cancel0001")
    assert result.exit_code == 0, result.output
    cancel = json.loads(result.output)["cancel"]
    assert cancel["nonce"] == "0"
    assert harness.payout("pyo_cancel0001").status == "SIGNED"  # not FAILED before it lands
    harness.until_status("pyo_cancel0001", "FAILED")
    payout = harness.payout("pyo_cancel0001")
    assert "cancelled by the operator" in (payout.reason or "") and cancel["txHash"] in payout.reason
    assert chain.balance(dest(1)) == 0
    assert chain.receipt(cancel["txHash"]) is not None
    status = json.loads(appliance(harness, "payout", "status", "pyo_cancel0001").output)
    assert status["status"] == "FAILED"
    assert [p["cancels"] for p in status["payloads"]] == [False, True]
    assert {a["outcome"] for a in status["attempts"]} >= {"SENT"}


def test_cancelling_a_payout_that_holds_no_nonce_fails_it_at_once(harness: Harness) -> None:
    harness.submit("pyo_cancel0002", 1, destination=dest(2))  # the wallet is empty: it waits
    harness.run_pass()
    result = appliance(harness, "payout", "cancel", "pyo_cancel0002")
    assert result.exit_code == 0, result.output
    assert harness.payout("pyo_cancel0002").status == "FAILED"
    again = appliance(harness, "payout", "cancel", "pyo_cancel0002")
    assert again.exit_code == 1 and "already FAILED" in again.output
    assert appliance(harness, "payout", "status", "pyo_nosuch0001").exit_code == 1


def test_a_fenced_wallet_signs_again_once_an_operator_unfences_it(harness: Harness) -> None:
    chain = local_chain(harness)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    with database.connection_context():
        Wallet.create(
            chain_id="eth_local", address=PAYOUT_WALLET, next_nonce=0, fence_reason="checked by a test"
        )
    harness.submit("pyo_unfence001", 77, destination=dest(3))
    harness.run_pass()
    assert harness.payout("pyo_unfence001").status == "REQUESTED"
    result = appliance(
        harness, "payout", "unfence", "--chain-id", "eth_local", "--wallet", PAYOUT_WALLET.lower()
    )
    assert result.exit_code == 0, result.output
    harness.skip_waits()
    harness.until_status("pyo_unfence001", "COMPLETED")
