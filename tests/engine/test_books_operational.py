"""Item 11 of issue 44 against anvil: bounded reconcile and sweep planning, dust swept once fees
fall, a sweep whose nonce a foreign transaction took, and a payout stuck for an hour."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from appliance.common import clock
from appliance.engine.db import database
from appliance.engine.models import Deposit, DepositAddress, Sweep
from appliance.engine.sweeps.job import Sweeper
from appliance.engine.treasury.positions import all_positions
from appliance.engine.treasury.reconcile import acknowledge
from appliance.settings import Settings
from tests.conftest import free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.books import custody_account
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET
from tests.engine.test_deposits import address_for, watch
from tests.engine.test_treasury_anvil import CHAIN, OUTSIDER, Setup, make_setup


@pytest.fixture
def node() -> Iterator[Anvil]:
    with running_anvil(free_port()) as anvil:
        yield anvil


@pytest.fixture
def setup(settings: Settings, node: Anvil) -> Setup:
    return make_setup(settings, node, multicall=True)


def test_a_payout_stuck_an_hour_with_later_nonces_queued_behind_it_is_critical(setup: Setup) -> None:
    setup.node.rpc("evm_setAutomine", False)
    setup.harness.submit("pyo_stuckfirst1", 66)
    setup.harness.until_status("pyo_stuckfirst1", "BROADCAST", mine=False)
    setup.harness.submit("pyo_stuckafter1", 77)
    setup.harness.until_status("pyo_stuckafter1", "BROADCAST", mine=False)
    clock.advance(timedelta(minutes=11))
    findings = setup.reconcile()["findings"]
    assert [(f["kind"], f["address"]) for f in findings] == [("stuck_transaction", PAYOUT_WALLET)] * 2
    assert setup.ready_treasury()[1] == "pass"
    clock.advance(timedelta(minutes=50))
    findings = setup.reconcile()["findings"]
    assert [(f["kind"], f["address"]) for f in findings] == [("stuck_payout", PAYOUT_WALLET)] * 2
    first = next(f for f in findings if setup.harness.payout("pyo_stuckfirst1").tx_hash in f["detail"])
    assert "1 later transaction(s) of the wallet wait behind it" in first["detail"]
    status, check = setup.ready_treasury()
    assert status == 503 and check == "fail"


def _deposit_key(deposit: DepositAddress) -> Any:
    path = f"m/44'/60'/{int(deposit.custody_account)}'/0/{int(deposit.derivation_index)}"
    key = custody_account(path)
    assert key.address == deposit.address
    return key


def _sweep_passes(setup: Setup, sweeper: Sweeper, done: Any, passes: int = 30) -> None:
    for _ in range(passes):
        with database.connection_context():
            sweeper.sweep_pass()
        if done():
            return
        clock.advance(timedelta(seconds=16))  # the sweeper looks at a taken nonce once per 15 s
        setup.node.mine()
        watch(setup.harness)
    pytest.fail("the sweeps did not get there")


def _confirmed(address: str) -> bool:
    with database.connection_context():
        return (
            Deposit.select()
            .join(DepositAddress)
            .where((DepositAddress.address == address) & (Deposit.status == "CONFIRMED"))
            .exists()
        )


def _sweeps(address: str) -> list[Sweep]:
    with database.connection_context():
        return list(Sweep.select().where(Sweep.address == address).order_by(Sweep.id))


def test_a_sweep_whose_nonce_a_foreign_transaction_took_fails_and_later_deposits_are_swept(
    setup: Setup,
) -> None:
    customer = address_for(setup.harness, "customer-taken", CHAIN).json["address"]
    setup.send_eth(customer, ETHER // 10)
    setup.watch_until_scanned()
    setup.node.rpc("evm_setAutomine", False)
    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    with database.connection_context():
        sweeper.sweep_pass()
        deposit = DepositAddress.get(DepositAddress.address == customer)
    [sweep] = _sweeps(customer)
    assert sweep.status == "sent"
    # The key of the deposit address, used elsewhere, sends at the same nonce with a higher fee.
    key = _deposit_key(deposit)
    fee = 50 * int(setup.node.rpc("eth_gasPrice"), 16)
    foreign = key.sign_transaction(
        {"type": 2, "chainId": NETWORK_ID, "nonce": 0, "to": OUTSIDER, "value": ETHER // 20,
         "gas": 21_000, "maxFeePerGas": fee, "maxPriorityFeePerGas": fee}
    )  # fmt: skip
    taken = setup.node.rpc("eth_sendRawTransaction", "0x" + bytes(foreign.raw_transaction).hex())
    setup.node.mine()
    setup.node.rpc("evm_setAutomine", True)
    assert setup.node.rpc("eth_getTransactionReceipt", taken)["status"] == "0x1"
    _sweep_passes(setup, sweeper, lambda: _sweeps(customer)[0].status == "failed")
    failed = _sweeps(customer)[0]
    assert taken in failed.reason and "did not sign" in failed.reason
    findings = setup.reconcile()["findings"]
    outflow = next(f for f in findings if f["kind"] == "unknown_outflow")
    assert outflow["address"] == customer and taken in outflow["detail"]
    assert acknowledge_nonce(setup, customer, 0)
    # A later deposit at the address is swept (the address is no longer held by an open sweep).
    setup.send_eth(customer, ETHER // 10)
    setup.watch_until_scanned()
    _sweep_passes(setup, sweeper, lambda: _sweeps(customer)[-1].status == "completed")
    assert len(_sweeps(customer)) == 2
    assert setup.node.balance(customer) == 0 or setup.node.balance(customer) < ETHER // 1000


def acknowledge_nonce(setup: Setup, address: str, nonce: int) -> int:
    with database.connection_context():
        return acknowledge(CHAIN, address, nonce, "test")


def _base_fee(setup: Setup, wei: int, blocks: int = 1) -> None:
    for _ in range(blocks):
        setup.node.rpc("anvil_setNextBlockBaseFeePerGas", hex(wei))
        setup.node.mine()
        watch(setup.harness)


def test_dust_skipped_while_fees_are_high_is_swept_once_they_fall(setup: Setup) -> None:
    customer = address_for(setup.harness, "customer-dust", CHAIN).json["address"]
    _base_fee(setup, 100 * 10**9)
    setup.send_eth(customer, 10**15)  # 0.001 ETH: less than a sweep's fee at 2 × 100 gwei
    _base_fee(setup, 100 * 10**9, blocks=3)
    for _ in range(20):  # the deposit confirmed (the watcher may need a pass more), the fee kept high
        if _confirmed(customer):
            break
        _base_fee(setup, 100 * 10**9)
    assert _confirmed(customer)
    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    with database.connection_context():
        sweeper.sweep_pass()
    [skipped] = _sweeps(customer)
    assert skipped.status == "skipped" and "not above the minimum" in skipped.reason
    with database.connection_context():
        sweeper.sweep_pass()  # the fee has not fallen: nothing is looked at again
    assert len(_sweeps(customer)) == 1
    _base_fee(setup, 10**9)  # the fee falls: the dust is worth its sweep now
    _sweep_passes(setup, sweeper, lambda: _sweeps(customer)[-1].status == "completed")
    assert [s.status for s in _sweeps(customer)] == ["skipped", "completed"]
    assert setup.node.balance(customer) < 10**15 // 10


class RowCounter:
    """Counts the rows the database hands back for statements reading the broadcast and
    signed_payload tables (a hook on the connection's cursors: what a run reads, not its time)."""

    def __init__(self, tables: tuple[str, ...] = ("broadcast", "signed_payload")) -> None:
        self.rows = 0
        self.tables = tables

    def wrap(self, execute: Any) -> Any:
        counter = self

        def execute_sql(sql: str, params: Any = None, *args: Any, **kwargs: Any) -> Any:
            cursor = execute(sql, params, *args, **kwargs)
            watched = sql.lstrip().upper().startswith("SELECT") and any(
                f'FROM "{table}"' in sql for table in counter.tables
            )
            return _Counted(cursor, counter) if watched else cursor

        return execute_sql


class _Counted:
    def __init__(self, cursor: Any, counter: RowCounter) -> None:
        self._cursor, self._counter = cursor, counter

    def fetchone(self) -> Any:
        row = self._cursor.fetchone()
        if row is not None:
            self._counter.rows += 1
        return row

    def fetchall(self) -> Any:
        rows = self._cursor.fetchall()
        self._counter.rows += len(rows)
        return rows

    def fetchmany(self, *args: Any) -> Any:
        rows = self._cursor.fetchmany(*args)
        self._counter.rows += len(rows)
        return rows

    def __iter__(self) -> Any:
        for row in self._cursor:
            self._counter.rows += 1
            yield row

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def test_reconcile_reads_only_the_broadcasts_since_its_last_run_not_every_sweep_ever_made(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    customers = [address_for(setup.harness, f"customer-bounded-{i}", CHAIN).json["address"] for i in range(4)]
    for customer in customers:
        setup.send_eth(customer, ETHER // 10)
        setup.mint(customer, 1_000)
    setup.watch_until_scanned()
    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    _sweep_passes(
        setup,
        sweeper,
        lambda: sum(s.status == "completed" for c in customers for s in _sweeps(c)) == 8,
        passes=60,
    )
    setup.watch_until_scanned()
    setup.node.set_balance(FEE_WALLET, 10 * ETHER)  # the deployment's gas money covers the sweep fees
    counter = RowCounter()
    inner = database.obj
    monkeypatch.setattr(inner, "execute_sql", counter.wrap(inner.execute_sql))
    assert setup.reconcile()["findings"] == []  # the first run reads the sweeps once, and folds them
    first = counter.rows
    assert first >= 12  # 8 sweeps and 4 gas top-ups, with their payloads
    counter.rows = 0
    setup.node.mine(3)
    setup.watch_until_scanned()
    assert setup.reconcile()["findings"] == []
    assert counter.rows == 0  # nothing in flight, no nonce used since: no broadcast read
    # The treasury's expected balances still count every sweep (folded).
    with database.connection_context():
        positions = all_positions(setup.runtime.chains, setup.runtime.custody)
    assert all(p.on_chain == p.expected for p in positions if p.role == "deposit")


def test_sweep_planning_reads_only_the_deposits_confirmed_since_its_last_pass(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    customers = [address_for(setup.harness, f"customer-planned-{i}", CHAIN).json["address"] for i in range(4)]
    for customer in customers:
        setup.send_eth(customer, ETHER // 10)
    setup.watch_until_scanned()
    sweeper = Sweeper(setup.runtime.chains, setup.runtime.custody)
    _sweep_passes(
        setup, sweeper, lambda: all(_sweeps(c) and _sweeps(c)[-1].status == "completed" for c in customers)
    )
    counter = RowCounter(("deposit",))
    inner = database.obj
    monkeypatch.setattr(inner, "execute_sql", counter.wrap(inner.execute_sql))
    for _ in range(3):
        with database.connection_context():
            sweeper.sweep_pass()
    assert counter.rows == 0, counter.rows  # nothing confirmed since: no deposit read
    setup.send_eth(customers[0], ETHER // 10)  # a new deposit is still planned
    setup.watch_until_scanned()
    _sweep_passes(
        setup,
        sweeper,
        lambda: len(_sweeps(customers[0])) == 2 and _sweeps(customers[0])[-1].status == "completed",
    )
