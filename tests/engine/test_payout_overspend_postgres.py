"""Issue 29 item 2 under load: 50 submissions on two racing pipelines (two nodes) over one
PostgreSQL engine database never sign more than the payout wallet holds."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Payout, PayoutAttempt
from appliance.engine.outgoing.transactions import reserve_nonce
from appliance.engine.payouts.pipeline import Pipeline
from appliance.settings import Settings
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, harness_settings, make_harness

pytestmark = pytest.mark.postgres

AMOUNT = 3 * ETHER // 100  # 50 of them need 1.5 ETH; the wallet holds 1


def test_two_nodes_on_postgresql_never_sign_more_than_the_wallet_holds(
    settings: Settings, migrated_postgres
) -> None:
    url = migrated_postgres("migrations.engine")
    settings = harness_settings(settings, {}).replace(engine_database=url)
    harness = make_harness(settings, lambda app: app.extensions["engine"].chains.get("eth_local").mine())
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    ids = [f"pyo_pgspend{n:03d}" for n in range(50)]
    for n, payout_id in enumerate(ids):
        harness.submit(payout_id, AMOUNT, destination=f"0x{0xE500 + n:040x}")
    second = Pipeline(harness.pipeline.chains, harness.pipeline.custody, lease=harness.pipeline.queue.lease)
    stop = threading.Event()

    def other_node() -> None:
        while not stop.is_set():
            with database.connection_context():
                second.run_pass()

    thread = threading.Thread(target=other_node)
    thread.start()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            harness.skip_waits()
            harness.run_pass()
            harness.mine()
            with database.connection_context():
                open_ = Payout.select().where(Payout.status.in_(("SIGNED", "BROADCAST"))).count()
                completed = Payout.select().where(Payout.status == "COMPLETED").count()
            if completed >= 30 and open_ == 0:
                break
    finally:
        stop.set()
        thread.join()
    with database.connection_context():
        signed = Broadcast.select().where(Broadcast.purpose == "payout").count()
        refused = PayoutAttempt.select().where(PayoutAttempt.outcome == "REJECTED_FUNDS").count()
        statuses = {p.status for p in Payout.select()}
    assert refused == 0
    assert signed * AMOUNT <= ETHER
    assert statuses <= {"COMPLETED", "REQUESTED"}
    assert chain.balance(PAYOUT_WALLET) >= 0
    assert sum(chain.balance(f"0x{0xE500 + n:040x}") for n in range(50)) == signed * AMOUNT
    database.close_all()


def test_two_nodes_using_a_wallet_for_the_first_time_at_once_both_reserve_a_nonce(
    settings: Settings, migrated_postgres
) -> None:
    """The wallet's row did not exist yet, so FOR UPDATE locked nothing and both nodes inserted it:
    the second's reservation failed on the unique key (a traceback in the two-node run). Now the
    second waits for the first's commit and takes the next nonce."""
    url = migrated_postgres("migrations.engine")
    settings = harness_settings(settings, {}).replace(engine_database=url)
    make_harness(settings, lambda app: None)  # opens the engine database on the test's server
    first_reserved, release = threading.Event(), threading.Event()
    nonces: list[int] = []
    errors: list[BaseException] = []

    def node(hold: bool) -> None:
        try:
            with database.connection_context(), write_transaction(database):
                nonces.append(reserve_nonce("eth_local", PAYOUT_WALLET, 0))
                if hold:
                    first_reserved.set()
                    release.wait(30)
        except BaseException as exc:
            errors.append(exc)

    first = threading.Thread(target=node, args=(True,))
    first.start()
    assert first_reserved.wait(30)
    second = threading.Thread(target=node, args=(False,))
    second.start()
    # Let the first commit only once the second is waiting on a lock inside PostgreSQL.
    with database.connection_context():
        for _ in range(3000):
            waiting = database.execute_sql(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            ).fetchone()[0]
            if waiting:
                break
            time.sleep(0.01)
    release.set()
    first.join()
    second.join()
    assert errors == []
    assert sorted(nonces) == [0, 1]
    database.close_all()
