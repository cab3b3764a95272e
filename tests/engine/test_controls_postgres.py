"""Administrators' decisions on PostgreSQL, where two of them (on two hosts) may decide one payout
at the same moment: exactly one decision is recorded and the other is told, in words, that the
payout is already decided (never a unique-key error)."""

from __future__ import annotations

import threading
import time

import psycopg2
import pytest

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.ledger import controls, service
from appliance.engine.ledger.models import PayoutApproval, PayoutApprovalWindow
from appliance.engine.models import Payout
from appliance.engine.payouts.state import record_new
from appliance.settings import Settings
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, harness_settings, make_harness

pytestmark = pytest.mark.postgres


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


def _waiting_for_locks(url: str, count: int) -> None:
    """Until ``count`` other sessions wait for a lock (both decisions have read and are queued)."""
    deadline = time.monotonic() + 30
    while True:
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
        if waiting >= count:
            return
        assert time.monotonic() < deadline, f"{waiting} sessions wait for a lock, not {count}"
        time.sleep(0.05)


@pytest.mark.parametrize("second", ["approve", "reject"])
def test_two_administrators_deciding_one_payout_at_once_record_one_decision_and_the_other_is_told(
    settings: Settings, migrated_postgres, second: str
) -> None:
    url = migrated_postgres("migrations.engine")
    harness = make_harness(harness_settings(settings, {}).replace(engine_database=url), _mine)
    harness.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, ETHER)
    with database.connection_context():
        service.set_limits("op_alpha0001", "eth_local", "ETH", {"approval_above_minor": "1000"})
    harness.submit("pyo_twoadmins1", 5000)
    harness.run_pass()
    payout = harness.payout("pyo_twoadmins1")
    assert payout.status == "REQUESTED" and "approval" in (payout.reason or "")

    # A third session holds back every insert of a decision (SHARE mode lets reads through), so
    # that both administrators' commands have looked at the payout before either records.
    gate = psycopg2.connect(url)
    gate.cursor().execute("LOCK TABLE payout_approval IN SHARE MODE")
    outcomes: dict[str, object] = {}

    def decide(actor: str, approve: bool) -> None:
        with database.connection_context():
            try:
                outcomes[actor] = service.decide(payout, approve, actor)["decision"]
            except Exception as exc:  # the loser's answer, checked below
                outcomes[actor] = exc

    threads = [
        threading.Thread(target=decide, args=("anahit", True)),
        threading.Thread(target=decide, args=("aram", second == "approve")),
    ]
    try:
        for thread in threads:
            thread.start()
        _waiting_for_locks(url, 2)
    finally:
        gate.commit()
        gate.close()
    for thread in threads:
        thread.join()

    decided = [actor for actor, outcome in outcomes.items() if isinstance(outcome, str)]
    refused = [outcome for outcome in outcomes.values() if not isinstance(outcome, str)]
    assert len(decided) == 1 and len(refused) == 1, outcomes
    assert isinstance(refused[0], service.LedgerError), repr(refused[0])
    assert "already decided" in str(refused[0]) or "only a REQUESTED payout is decided" in str(refused[0])
    with database.connection_context():
        rows = [(a.decided_by, a.decision) for a in PayoutApproval.select()]
    assert rows == [(decided[0], outcomes[decided[0]])]


def test_two_admissions_of_one_operator_in_two_processes_never_both_slip_under_the_rolling_threshold(
    settings: Settings, migrated_postgres
) -> None:
    """Two admissions in two sessions (as two serving processes' group commits are): the second
    waits on the operator's limit row until the first commits, then sums the first's payout in, so
    exactly one of two payouts of 100 under a rolling threshold of 150 waits for approval."""
    url = migrated_postgres("migrations.engine")
    make_harness(harness_settings(settings, {}).replace(engine_database=url), _mine)
    with database.connection_context():
        service.set_limits("op_alpha0001", "eth_local", "ETH", {"approval_rolling_minor": "150"})
    entered, release = threading.Event(), threading.Event()

    def admit(payout_id: str, hold: bool) -> None:
        with database.connection_context(), write_transaction(database):
            payout = Payout(
                operator="op_alpha0001",
                payout_id=payout_id,
                idempotency_key=f"key-{payout_id}",
                instruction_hash="0" * 64,
                asset="ETH",
                chain_id="eth_local",
                amount_minor="100",
                destination="0x" + "00" * 18 + "00d1",
                created_at=clock.now(),
            )
            assert record_new(payout)
            controls.enter_approval_window(payout)
            if hold:  # the first holds its transaction open until the second queues behind it
                entered.set()
                assert release.wait(30)

    first = threading.Thread(target=admit, args=("pyo_pgrolling1", True))
    first.start()
    assert entered.wait(30)
    second = threading.Thread(target=admit, args=("pyo_pgrolling2", False))
    second.start()
    try:
        _waiting_for_locks(url, 1)
    finally:
        release.set()
        first.join()
        second.join()
    with database.connection_context():
        rows = sorted((int(r.window_sum_minor), r.approval_due) for r in PayoutApprovalWindow.select())
    assert rows == [(100, False), (200, True)]
