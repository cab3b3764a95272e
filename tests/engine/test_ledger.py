"""The per-operator double-entry ledger (issue 31, item 1): a seeded random run on anvil with
deposits, reorgs that retract confirmed deposits, payouts completed and payouts failed (cancelled
once signed: the self-transfer's fee is paid), after which every operator's balance equals its
deposits minus its payouts minus its fees, to the wei; and a prefunded operator cannot spend what
another operator deposited."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from appliance.common.db import is_sqlite
from appliance.engine.db import database
from appliance.engine.ledger import book, service
from appliance.engine.ledger.models import LedgerAccount, LedgerEntry
from appliance.engine.models import Deposit, Payout
from appliance.engine.payouts.cancel import cancel
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import running_anvil
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET, harness_settings, make_harness
from tests.engine.test_deposit_reorgs import deposit, harness_for, watch_until_caught_up
from tests.engine.test_deposits import address_for, watch

FINAL = ("COMPLETED", "FAILED")


def ledger_totals() -> dict[str, dict[str, int]]:
    """Per operator, the ledger's accounts of eth_anvil ETH."""
    out: dict[str, dict[str, int]] = {}
    with database.connection_context():
        for operator_id in {row.operator_id for row in LedgerAccount.select()}:
            out[operator_id] = book.balances(operator_id).get(("eth_anvil", "ETH"), {})
    return out


def assert_books_balance() -> None:
    """Every journal's legs sum to zero and every account's balance is the sum of its entries."""
    with database.connection_context():
        journals: dict[str, int] = defaultdict(int)
        accounts: dict[tuple, int] = defaultdict(int)
        for entry in LedgerEntry.select():
            journals[entry.journal] += int(entry.amount_minor)
            key = (entry.operator_id, entry.chain_id, entry.asset_code, entry.account)
            accounts[key] += int(entry.amount_minor)
        assert journals and set(journals.values()) == {0}
        for row in LedgerAccount.select():
            key = (row.operator_id, row.chain_id, row.asset_code, row.account)
            assert int(row.balance_minor) == accounts[key], key


def settled(payout: Payout) -> bool:
    """Final, or waiting for the prefunded operator's funds (it is cancelled then)."""
    return payout.status in FINAL or (payout.status == "REQUESTED" and "prefunded" in (payout.reason or ""))


def test_a_seeded_random_run_with_reorgs_leaves_every_balance_equal_to_deposits_less_payouts_and_fees(
    settings: Settings,
) -> None:
    random_run_with_reorgs(settings)


@pytest.mark.postgres
def test_the_seeded_random_run_with_reorgs_balances_to_the_wei_on_postgresql(
    settings: Settings, migrated_postgres
) -> None:
    """The same run on a PostgreSQL engine database (`make test-postgres`): its row locks, not
    SQLite's exclusive write transaction, keep each account's balance the sum of its entries."""
    random_run_with_reorgs(settings, {"APPLIANCE_ENGINE_DATABASE": migrated_postgres("migrations.engine")})


def random_run_with_reorgs(settings: Settings, environ: dict[str, str] | None = None) -> None:
    rng = random.Random(3101)
    with running_anvil(free_port()) as node:
        harness = harness_for(settings, node, 2, environ)
        if environ:  # the PostgreSQL run is one
            assert not is_sqlite(database)
        chains = harness.app.extensions["engine"].chains
        custody = harness.app.extensions["engine"].custody
        second = make_operator(harness.app, "op_bravo0001")
        signers = {
            "op_alpha0001": harness.signer,
            "op_bravo0001": Signer(harness.app.test_client(), "op_bravo0001", second["secret"]),
        }
        with database.connection_context():
            service.set_ledger_mode("op_alpha0001", "prefunded")
        node.set_balance(PAYOUT_WALLET, 1000 * ETHER)
        node.set_balance(FEE_WALLET, 10 * ETHER)
        node.mine(5)
        addresses = {
            op: address_for(harness, f"customer-{op}", "eth_anvil", signer=s).json["address"]
            for op, s in signers.items()
        }
        watch_until_caught_up(harness, node)
        payouts: list[tuple[str, str]] = []
        retracted_rounds = 0
        for round_no in range(8):
            # Deposits, confirmed (2 confirmations) and credited.
            start = int(node.rpc("eth_blockNumber"), 16)
            for _ in range(rng.randint(1, 3)):
                op = rng.choice(list(signers))
                deposit(node, addresses[op], rng.randint(10**15, 10**17))
            node.mine(2)
            watch_until_caught_up(harness, node)
            # A reorg of those blocks only (no payout's transaction is in them): the confirmed
            # deposits are retracted and their credits reversed.
            if rng.random() < 0.4:
                head = int(node.rpc("eth_blockNumber"), 16)
                node.rpc("anvil_reorg", head - start, [])
                node.mine(1)
                watch_until_caught_up(harness, node)
                retracted_rounds += 1
            # Payouts: some completed, some cancelled once signed (FAILED, the fee paid), some
            # of the prefunded operator waiting for funds (then cancelled before any nonce).
            batch = []
            for n in range(rng.randint(1, 3)):
                op = rng.choice(list(signers))
                payout_id = f"pyo_round{round_no}n{n}"
                amount = rng.randint(10**14, 6 * 10**16)
                response = signers[op].submit(
                    payout_id, amount=str(amount), asset="ETH", destination=f"0x{0xD000 + n:040x}"
                )
                assert response.status_code == 201, response.json
                batch.append((op, payout_id))
            harness.run_pass()
            for _op, payout_id in batch:
                row = harness.payout(payout_id)
                if row.status == "SIGNED" and rng.random() < 0.35:
                    with database.connection_context():
                        cancel(row, chains, custody)
            harness.drive(lambda batch=batch: all(settled(harness.payout(p)) for _, p in batch), seconds=60)
            for _op, payout_id in batch:
                row = harness.payout(payout_id)
                if row.status == "REQUESTED":
                    with database.connection_context():
                        cancel(row, chains, custody)
            payouts += batch
            assert_books_balance()

        with database.connection_context():
            statuses = [p.status for p in Payout.select()]
            retracted = Deposit.select().where(Deposit.status == "RETRACTED").count()
        assert statuses.count("COMPLETED") >= 3 and statuses.count("FAILED") >= 2, statuses
        assert retracted_rounds >= 1 and retracted >= 1
        with database.connection_context():
            kinds = {e.kind for e in LedgerEntry.select(LedgerEntry.kind)}
        # Every cause was exercised: credits reversed by a reorg, payouts released when FAILED.
        assert kinds == {
            book.DEPOSIT_CREDIT,
            book.DEPOSIT_REVERSAL,
            book.PAYOUT_RESERVE,
            book.PAYOUT_RELEASE,
            book.PAYOUT_SETTLE,
            book.NETWORK_FEE,
        }, kinds
        totals = ledger_totals()
        with database.connection_context():
            for op in signers:
                deposited = sum(
                    int(d.amount_minor)
                    for d in Deposit.select().where(
                        (Deposit.operator == op) & (Deposit.status == "CONFIRMED")
                    )
                )
                mine = list(Payout.select().where(Payout.operator == op))
                paid = sum(int(p.amount_minor) for p in mine if p.status == "COMPLETED")
                fees = sum(int(p.fee_minor) for p in mine if p.fee_minor)
                accounts = totals[op]
                assert accounts[book.IN_FLIGHT] == 0
                assert accounts[book.BALANCE] == deposited - paid - fees, op
                assert -accounts[book.DEPOSITS] == deposited
                assert accounts[book.PAID_OUT] == paid and accounts[book.FEES] == fees
                assert service.balance(op)["balances"][0]["availableMinor"] == str(deposited - paid - fees)
        assert_books_balance()


def _mine_local(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


def test_a_prefunded_operator_cannot_spend_what_another_operator_deposited(settings: Settings) -> None:
    harness = make_harness(harness_settings(settings, {}), _mine_local)
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, 10 * ETHER)  # the shared payout wallet holds plenty
    bravo = make_operator(harness.app, "op_bravo0001")
    bravo_signer = Signer(harness.app.test_client(), "op_bravo0001", bravo["secret"])
    with database.connection_context():
        service.set_ledger_mode("op_alpha0001", "prefunded")
    bravo_address = address_for(harness, "bravo-1", signer=bravo_signer).json["address"]
    chain.faucet("ETH", bravo_address, ETHER)  # bravo deposits 1 ETH
    for _ in range(3):
        harness.mine()
        watch(harness)
    assert service_balance("op_bravo0001") == ETHER
    harness.submit("pyo_alphaspend1", ETHER // 2, destination="0x" + "00" * 19 + "d1")
    harness.run_pass()
    waiting = harness.detail("pyo_alphaspend1")
    assert waiting["status"] == "REQUESTED" and waiting["broadcast"] is None
    assert "op_alpha0001 (ledger mode prefunded) has 0 ETH" in waiting["reason"]
    # Bravo (unlimited) pays from its own deposit; alpha still cannot.
    bravo_signer.submit(
        "pyo_bravospend1", amount=str(ETHER // 4), asset="ETH", destination="0x" + "00" * 19 + "d2"
    )
    harness.until_status("pyo_bravospend1", "COMPLETED")
    assert harness.payout("pyo_alphaspend1").status == "REQUESTED"
    # An administrator's credit covers alpha's payout and its fee: it goes out.
    with database.connection_context():
        service.adjust("op_alpha0001", "eth_local", "ETH", ETHER, memo="wire received", actor="test")
    harness.skip_waits()
    harness.until_status("pyo_alphaspend1", "COMPLETED")
    alpha = service_balance("op_alpha0001")
    fee = int(harness.payout("pyo_alphaspend1").fee_minor)
    assert alpha == ETHER - ETHER // 2 - fee
    bravo_fee = int(harness.payout("pyo_bravospend1").fee_minor)
    assert service_balance("op_bravo0001") == ETHER - ETHER // 4 - bravo_fee


def service_balance(operator_id: str) -> int:
    with database.connection_context():
        rows = service.balance(operator_id)["balances"]
    return int(next(r["availableMinor"] for r in rows if r["assetId"] == "eth_local:ETH"))


def test_a_prefunded_operators_token_payout_waits_for_its_own_native_balance_to_cover_the_fee(
    settings: Settings,
) -> None:
    harness = make_harness(harness_settings(settings, {}), _mine_local)
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("USDC", PAYOUT_WALLET, 10_000_000)
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    with database.connection_context():
        service.set_ledger_mode("op_alpha0001", "prefunded")
        service.adjust("op_alpha0001", "eth_local", "USDC", 3_000_000, memo="wire", actor="test")
    harness.submit("pyo_tokenfee01", 2_000_000, asset="USDC", destination="0x" + "00" * 19 + "d3")
    harness.run_pass()
    waiting = harness.detail("pyo_tokenfee01")
    assert waiting["status"] == "REQUESTED" and waiting["broadcast"] is None
    assert "has 0 ETH minor units available" in waiting["reason"] and "network fee" in waiting["reason"]
    with database.connection_context():
        service.adjust("op_alpha0001", "eth_local", "ETH", ETHER // 100, memo="gas money", actor="test")
    harness.skip_waits()
    harness.until_status("pyo_tokenfee01", "COMPLETED")
    fee = int(harness.payout("pyo_tokenfee01").fee_minor)
    with database.connection_context():
        rows = {r["assetId"]: r for r in service.balance("op_alpha0001")["balances"]}
    assert rows["eth_local:USDC"]["availableMinor"] == "1000000"
    assert rows["eth_local:USDC"]["paidOutMinor"] == "2000000"
    assert rows["eth_local:ETH"]["availableMinor"] == str(ETHER // 100 - fee)
    assert rows["eth_local:ETH"]["networkFeesMinor"] == str(fee)
