"""The ledger's row locks on PostgreSQL, where a payout's completion (its settlement, then its
network fee) and another payout's reservation (the controls' look under the balance row's lock,
then the reservation) of the same operator and asset run at the same moment on two nodes: they
take turns, never deadlock (the two nodes' pause test met one: the completion held in_flight and
waited for balance while the reservation held balance and waited for in_flight)."""

from __future__ import annotations

import threading
import time

import psycopg2
import pytest

from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.ledger import book, controls
from appliance.engine.models import Payout
from appliance.settings import Settings
from tests.engine.pipeline_harness import harness_settings, make_harness

pytestmark = pytest.mark.postgres

OPERATOR = "op_alpha0001"


def _waiting_for_a_lock(url: str, done: threading.Event) -> None:
    """Until another session waits for a lock, or ``done`` (the other side went through)."""
    deadline = time.monotonic() + 30
    while not done.is_set():
        connection = psycopg2.connect(url)
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'"
                )
                (waiting,) = cursor.fetchone()
        finally:
            connection.close()
        if waiting:
            return
        assert time.monotonic() < deadline, "neither waiting nor through"
        time.sleep(0.02)


def _payout(number: int, amount: int, fee: int | None = None) -> Payout:
    """A payout as the ledger sees it (the ledger keeps no key to the payout table)."""
    return Payout(
        id=number,
        payout_id=f"pyo_ledgerpg{number:04d}",
        operator=OPERATOR,
        chain_id="eth_local",
        asset="ETH",
        amount_minor=str(amount),
        fee_minor=None if fee is None else str(fee),
    )


def test_a_completion_and_a_reservation_of_one_operator_at_once_take_turns_without_a_deadlock(
    settings: Settings, migrated_postgres
) -> None:
    url = migrated_postgres("migrations.engine")
    make_harness(harness_settings(settings, {}).replace(engine_database=url), lambda app: None)
    paid, next_one = _payout(901, 300, fee=21), _payout(902, 500)
    with database.connection_context(), write_transaction(database):
        book.adjust(OPERATOR, "eth_local", "ETH", 10_000, memo="prefund", actor="test")
        book.on_transition(paid, "REQUESTED", "SIGNED")  # reserved earlier
    settled, reserving_locked = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def complete() -> None:
        """The pipeline's final move: settle, then (after the reservation has started) the fee."""
        try:
            with database.connection_context(), write_transaction(database):
                book.on_transition(paid, "BROADCAST", "COMPLETED")
                settled.set()
                _waiting_for_a_lock(url, reserving_locked)
                book.charge_fee(paid, "ETH")
        except BaseException as exc:
            errors.append(exc)
            settled.set()

    def reserve() -> None:
        """The pipeline's reservation: the controls' look under the balance lock, then reserve."""
        settled.wait()
        try:
            with database.connection_context(), write_transaction(database):
                assert controls.hold_reason(next_one, native_code="ETH", native=True, fee_cost=0) is None
                reserving_locked.set()
                book.on_transition(next_one, "REQUESTED", "SIGNED")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=complete), threading.Thread(target=reserve)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with database.connection_context():
        accounts = book.balances(OPERATOR)[("eth_local", "ETH")]
    assert accounts[book.BALANCE] == 10_000 - 300 - 21 - 500
    assert (accounts[book.IN_FLIGHT], accounts[book.PAID_OUT], accounts[book.FEES]) == (500, 300, 21)
