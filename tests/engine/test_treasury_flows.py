"""Flow-based expected balances of the custody wallets (issue 44, item 7) against anvil: token
outflows that use no nonce of the wallet (an EIP-2612 permit's transferFrom, an EIP-3009
transferWithAuthorization) are findings naming their transaction, and an allowance left on a
custody wallet is a finding."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.db import database
from appliance.engine.models import Deposit, TreasuryFlowCursor
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.books import CHAIN, THIEF, Books, custody_account, make_books
from tests.engine.contracts.compile import artifact, compile_contract
from tests.engine.pipeline_harness import FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC
from tests.engine.test_deposits import address_for


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.fixture
def books(settings: Settings, node: Anvil) -> Books:
    return make_books(settings, node)


def _kinds(report: dict) -> list[tuple[str, str, str]]:
    return [(f["kind"], f["assetCode"], f["address"]) for f in report["findings"]]


def test_the_committed_permit_token_bytecode_is_its_source_compiled() -> None:
    assert compile_contract("permit_token")["bytecode"] == artifact("permit_token")["bytecode"]


def test_a_permit_drain_of_the_payout_wallet_is_a_critical_finding_naming_its_transaction(
    books: Books, settings: Settings
) -> None:
    books.mint(books.ptt, PAYOUT_WALLET, 49_000_000)
    books.settle()
    assert books.reconcile()["findings"] == []  # the flows start at this run's confirmed head
    payout_key = custody_account()
    assert payout_key.address == PAYOUT_WALLET
    books.permit(payout_key, THIEF, 45_000_000)
    drain = books.transfer_from(THIEF, PAYOUT_WALLET, THIEF, 45_000_000)
    books.settle()
    assert books.token_balance(books.ptt, PAYOUT_WALLET) == 4_000_000
    report = books.reconcile()
    assert _kinds(report) == [("unexplained_outflow", "PTT", PAYOUT_WALLET)]
    finding = report["findings"][0]
    assert finding["actualMinor"] == "45000000"
    assert drain in finding["detail"] and THIEF in finding["detail"]
    ready = books.harness.app.test_client()
    books.runtime.health.run(fresh=True)
    assert ready.get("/health/ready").json["checks"]["treasury"] == "fail"
    # It stays on later runs (the chain keeps it), until acknowledged by its transaction.
    books.settle()
    assert _kinds(books.reconcile()) == [("unexplained_outflow", "PTT", PAYOUT_WALLET)]
    result = CliRunner().invoke(
        cli,
        [
            "reconcile",
            "--json",
            "--acknowledge",
            f"{CHAIN}:{PAYOUT_WALLET}:{drain}",
            "--data-dir",
            str(settings.data_dir),
        ],
        env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **books.environ},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["findings"] == []


def test_a_transfer_with_authorization_out_of_the_fee_wallet_is_a_finding_naming_it(books: Books) -> None:
    books.mint(books.ptt, FEE_WALLET, 3_000_000)
    books.settle()
    assert books.reconcile()["findings"] == []
    fee_key = custody_account("m/44'/60'/0'/0/1")
    assert fee_key.address == FEE_WALLET
    taken = books.transfer_with_authorization(fee_key, THIEF, THIEF, 2_500_000)
    books.settle()
    assert books.token_balance(books.ptt, FEE_WALLET) == 500_000
    report = books.reconcile()
    assert _kinds(report) == [("unexplained_outflow", "PTT", FEE_WALLET)]
    assert taken in report["findings"][0]["detail"]
    assert report["findings"][0]["actualMinor"] == "2500000"


def test_an_allowance_left_on_the_payout_wallet_is_a_finding_until_it_is_spent(books: Books) -> None:
    books.mint(books.ptt, PAYOUT_WALLET, 1_000_000)
    books.settle()
    assert books.reconcile()["findings"] == []
    books.permit(custody_account(), THIEF, 700)
    books.settle()
    report = books.reconcile()
    assert _kinds(report) == [("allowance", "PTT", PAYOUT_WALLET)]
    assert THIEF in report["findings"][0]["detail"] and report["findings"][0]["actualMinor"] == "700"
    spent = books.transfer_from(THIEF, PAYOUT_WALLET, THIEF, 700)
    books.settle()
    report = books.reconcile()  # the allowance is gone; the transfer it allowed is named
    assert _kinds(report) == [("unexplained_outflow", "PTT", PAYOUT_WALLET)]
    assert spent in report["findings"][0]["detail"]


def test_the_flows_read_only_the_blocks_since_the_last_run(books: Books) -> None:
    books.settle()
    books.reconcile()
    with database.connection_context():
        first = TreasuryFlowCursor.get(TreasuryFlowCursor.chain_id == CHAIN).next_block
    books.node.mine(7)
    books.reconcile()
    with database.connection_context():
        second = TreasuryFlowCursor.get(TreasuryFlowCursor.chain_id == CHAIN).next_block
    assert second == first + 7


def test_a_30_decimal_tokens_deposit_of_10_to_the_39_is_named_not_dropped(
    settings: Settings, node: Anvil
) -> None:
    books = make_books(settings, node, ptt_decimals=30)
    customer = address_for(books.harness, "customer-huge", CHAIN).json["address"]
    books.settle()
    assert books.reconcile()["findings"] == []
    small = books.mint(books.ptt, customer, 10**38)  # 39 digits: a deposit like any other
    huge = books.mint(books.ptt, customer, 10**39)  # 40 digits: above amountMinor's 39
    books.settle(4)
    with database.connection_context():
        amounts = [d.amount_minor for d in Deposit.select().where(Deposit.tx_hash == small)]
    assert amounts == [str(10**38)]
    report = books.reconcile()
    assert _kinds(report) == [("deposit_out_of_range", "PTT", customer)]
    finding = report["findings"][0]
    assert huge in finding["detail"] and finding["actualMinor"] == str(10**39)
    ptt = next(s for s in report["solvency"] if s["assetCode"] == "PTT")
    assert ptt["heldMinor"] == str(10**39 + 10**38) and ptt["shortfallMinor"] == "0"


def test_ether_sent_from_the_payout_wallet_with_its_key_is_one_finding_at_its_nonce(books: Books) -> None:
    books.settle()
    assert books.reconcile()["findings"] == []
    key = custody_account()
    fee = 10 * int(books.node.rpc("eth_gasPrice"), 16)
    signed = key.sign_transaction(
        {"type": 2, "chainId": NETWORK_ID, "nonce": 0, "to": THIEF, "value": 3 * 10**18,
         "gas": 21_000, "maxFeePerGas": fee, "maxPriorityFeePerGas": fee}
    )  # fmt: skip
    taken = books.node.rpc("eth_sendRawTransaction", "0x" + bytes(signed.raw_transaction).hex())
    books.settle()
    report = books.reconcile()
    # The nonce check names it; the flows count it (no flow_mismatch beside it).
    assert _kinds(report) == [("unknown_outflow", "ETH", PAYOUT_WALLET)]
    assert taken in report["findings"][0]["detail"]


def test_a_balance_that_fell_without_any_transaction_is_a_flow_mismatch_naming_the_blocks(
    books: Books,
) -> None:
    books.settle()
    assert books.reconcile()["findings"] == []
    books.node.set_balance(FEE_WALLET, 10**17)  # a tenth of its ether gone, by no transaction
    books.settle()
    report = books.reconcile()
    assert _kinds(report) == [("flow_mismatch", "ETH", FEE_WALLET)]
    assert report["findings"][0]["actualMinor"] == str(10**17) and "blocks" in report["findings"][0]["detail"]
