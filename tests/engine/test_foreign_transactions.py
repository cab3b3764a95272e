"""Issue 44, item 5, against a real node (anvil): nothing unexplained is adopted. A data-less
transfer from the fee wallet that the engine did not sign was recorded as a gas top-up (and
reconcile's nonce check then counted it as the engine's); now it fences the fee wallet, is a
finding, and waits for an administrator's `appliance payout reject-foreign` (or `adopt`),
audited."""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from eth_utils import to_checksum_address

from appliance.cli import cli
from appliance.engine.custody import FEE_WALLET as FEE_PATH
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Wallet
from appliance.engine.treasury.reconcile import reconcile
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)
from tests.engine.test_payout_anvil_fencing import DEST, FULL, TOKEN, environ

THIEF = "0x00000000000000000000000000000000000bad01"
HALF = 5 * 10**17


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


def _take_from_the_fee_wallet(harness: Harness, node: Anvil, nonce: int) -> str:
    """0.5 ETH out of the fee wallet, signed with the custody key outside the engine."""
    key = harness.app.extensions["engine"].custody.key  # the bare key: no engine, no policy
    fees = int(node.rpc("eth_gasPrice"), 16) * 2
    raw, _ = key.sign_transaction(
        *FEE_PATH,
        {
            "type": 2,
            "chainId": NETWORK_ID,
            "nonce": nonce,
            "to": to_checksum_address(THIEF),
            "value": HALF,
            "data": b"",
            "gas": 21000,
            "maxFeePerGas": fees,
            "maxPriorityFeePerGas": 10**9,
        },
    )
    tx_hash: str = node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    node.mine()
    return tx_hash


def _findings(harness: Harness) -> list[dict[str, Any]]:
    runtime = harness.app.extensions["engine"]
    with database.connection_context():
        return list(reconcile(runtime.chains, runtime.custody)["findings"])


def test_a_transfer_from_the_fee_wallet_the_engine_did_not_sign_is_no_top_up_and_fences_the_wallet(
    settings: Settings, node: Anvil
) -> None:
    node.rpc("anvil_setCode", TOKEN, "0x" + FULL)
    node.set_balance(FEE_WALLET, 10 * ETHER)
    harness = make_harness(harness_settings(settings, environ(node, TOKEN)), lambda app: node.mine())
    # A token payout from a payout wallet without gas: the fee wallet tops it up (its nonce 0).
    harness.submit("pyo_foreignfee1", 5, asset="USDC", destination=DEST)
    harness.until_status("pyo_foreignfee1", "COMPLETED", seconds=60)

    stolen = _take_from_the_fee_wallet(harness, node, 1)
    node.set_balance(PAYOUT_WALLET, 0)  # the next token payout needs a top-up again
    harness.submit("pyo_foreignfee2", 7, asset="USDC", destination=DEST)
    for _ in range(4):
        harness.skip_waits()
        harness.run_pass()
        node.mine()
    payout = harness.payout("pyo_foreignfee2")
    assert payout.status == "REQUESTED"
    assert "signing for the fee wallet on eth_anvil is stopped" in (payout.reason or "")
    assert stolen in (payout.reason or "")
    with database.connection_context():
        assert not Broadcast.select().where(Broadcast.tx_hash == stolen).exists()  # no top-up
        assert Broadcast.select().where(Broadcast.purpose == "gas_topup").count() == 1
        assert Wallet.get(Wallet.address == FEE_WALLET).fence_reason
    assert harness.app.test_client().get("/health/ready").json["checks"]["payouts:fencing"] == "fail"
    outflows = [f for f in _findings(harness) if f["kind"] == "unknown_outflow"]
    assert [(f["address"], f["actualMinor"]) for f in outflows] == [(FEE_WALLET, str(HALF))]
    assert stolen in outflows[0]["detail"]

    runner, env = CliRunner(), {"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC}
    listed = runner.invoke(
        cli, ["payout", "foreign", "--pending", "--json", "--data-dir", str(settings.data_dir)], env=env
    )
    assert listed.exit_code == 0, listed.output
    [row] = json.loads(listed.output)
    assert (row["txHash"], row["role"], row["to"], row["valueMinor"]) == (
        stolen,
        "fee",
        to_checksum_address(THIEF),
        str(HALF),
    )
    # A fee-wallet transaction pays no payout: it can only be rejected.
    refused = runner.invoke(
        cli,
        ["payout", "adopt", "--chain-id", "eth_anvil", "--tx", stolen, "--payout", "pyo_foreignfee2",
         "--yes", "--data-dir", str(settings.data_dir)],
        env=env,
    )  # fmt: skip
    assert refused.exit_code == 1 and "only a payout wallet's transaction" in refused.output
    # Skipping over it is refused: it waits for a decision.
    skipped = runner.invoke(
        cli,
        ["payout", "unfence", "--chain-id", "eth_anvil", "--wallet", FEE_WALLET,
         "--data-dir", str(settings.data_dir)],
        env=env,
    )  # fmt: skip
    assert skipped.exit_code == 1 and "waiting for a decision" in skipped.output
    rejected = runner.invoke(
        cli,
        ["payout", "reject-foreign", "--chain-id", "eth_anvil", "--tx", stolen, "--memo", "key leaked",
         "--json", "--data-dir", str(settings.data_dir)],
        env=env,
    )  # fmt: skip
    assert rejected.exit_code == 0, rejected.output
    decided = json.loads(rejected.output)
    assert (decided["status"], decided["decidedBy"], decided["note"]) == (
        "rejected",
        getpass.getuser(),
        "key leaked",
    )
    assert decided["decidedAt"] and decided["walletReleased"] is True
    again = runner.invoke(
        cli,
        ["payout", "reject-foreign", "--chain-id", "eth_anvil", "--tx", stolen,
         "--data-dir", str(settings.data_dir)],
        env=env,
    )  # fmt: skip
    assert again.exit_code == 1 and "was rejected by" in again.output

    # The fee wallet signs again at the next nonce; the finding stays until acknowledged.
    harness.skip_waits()
    harness.until_status("pyo_foreignfee2", "COMPLETED", seconds=60)
    with database.connection_context():
        assert [int(b.nonce) for b in Broadcast.select().where(Broadcast.wallet == FEE_WALLET)] == [0, 2]
    outflows = [f for f in _findings(harness) if f["kind"] == "unknown_outflow"]
    assert [(f["address"], f["actualMinor"]) for f in outflows] == [(FEE_WALLET, str(HALF))]
    assert node.balance(THIEF) == HALF
