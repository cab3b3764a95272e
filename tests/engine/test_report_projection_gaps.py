"""The report projection on PostgreSQL, where an event's id is taken at insert and an event can
commit after a higher one (issue 29 item 13); and `appliance reports rebuild`."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.models import ProjectionGap, WebhookEvent
from appliance.engine.reports.projector import GAP_TIMEOUT, ReportProjector
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, emit
from appliance.settings import Settings
from tests.engine.pipeline_harness import Harness, harness_settings, make_harness
from tests.engine.test_reports_exports import _mine, report, totals

OPERATOR = "op_alpha0001"


def deposit(amount: int) -> dict:
    return {"assetCode": "USDC", "amountMinor": str(amount), "txHash": "0x" + f"{amount:064x}"}


def emit_committed(amount: int) -> None:
    with database.connection_context(), write_transaction(database):
        emit(OPERATOR, DEPOSIT_CONFIRMED, deposit(amount))


def project(projector: ReportProjector) -> None:
    with database.connection_context():
        while projector.run_pass():
            pass


class OpenTransaction:
    """A thread that writes an event and keeps its transaction open until told to commit (or to
    roll back): its id is taken, the event not yet visible."""

    def __init__(self, amount: int, *, roll_back: bool = False) -> None:
        self.written = threading.Event()
        self.finish = threading.Event()
        self.roll_back = roll_back
        self.thread = threading.Thread(target=self._run, args=(amount,))
        self.thread.start()
        assert self.written.wait(30), "the open transaction did not write its event"

    def _run(self, amount: int) -> None:
        with database.connection_context():
            try:
                with write_transaction(database):
                    emit(OPERATOR, DEPOSIT_CONFIRMED, deposit(amount))
                    self.written.set()
                    self.finish.wait(30)
                    if self.roll_back:
                        raise LookupError("rolled back on purpose")
            except LookupError:
                pass

    def end(self) -> None:
        self.finish.set()
        self.thread.join()


@pytest.fixture
def pg_harness(settings: Settings, migrated_postgres) -> Harness:
    environ = {"APPLIANCE_ENGINE_DATABASE": migrated_postgres("migrations.engine")}
    harness = make_harness(harness_settings(settings, environ), _mine)
    yield harness
    database.close_all()


def event_created_at(amount: int) -> str:
    with database.connection_context():
        for event in WebhookEvent.select():
            if f'"amountMinor":"{amount}"' in event.payload:
                return clock.iso(event.created_at)
    raise AssertionError(f"no event of {amount}")


@pytest.mark.postgres
def test_an_event_committed_after_a_higher_id_is_counted_once_it_appears(pg_harness: Harness) -> None:
    projector = ReportProjector()
    emit_committed(1)
    late = OpenTransaction(10)  # takes the next id and does not commit yet
    emit_committed(100)  # a higher id, committed first
    project(projector)
    before = report(pg_harness, "DEPOSITS")
    assert totals(before) == {"USDC": ("2", "101", "0")}
    # Not built past the event still missing: builtThrough stays at the last event below it.
    assert before["builtThrough"] == event_created_at(1)
    late.end()
    project(projector)
    after = report(pg_harness, "DEPOSITS")
    assert totals(after) == {"USDC": ("3", "111", "0")}  # the late event counted, and only once
    project(projector)
    assert totals(report(pg_harness, "DEPOSITS")) == {"USDC": ("3", "111", "0")}
    with database.connection_context():
        assert ProjectionGap.select().count() == 0
    assert after["builtThrough"] > before["builtThrough"]


@pytest.mark.postgres
def test_the_id_of_a_rolled_back_transaction_is_given_up_after_the_timeout(pg_harness: Harness) -> None:
    projector = ReportProjector()
    emit_committed(1)
    never = OpenTransaction(10, roll_back=True)
    emit_committed(100)
    never.end()  # rolled back: its id will never appear
    project(projector)
    with database.connection_context():
        assert ProjectionGap.select().count() == 1
    assert report(pg_harness, "DEPOSITS")["builtThrough"] == event_created_at(1)
    clock.advance(GAP_TIMEOUT + timedelta(seconds=1))
    project(projector)
    with database.connection_context():
        assert ProjectionGap.select().count() == 0
    body = report(pg_harness, "DEPOSITS")
    assert totals(body) == {"USDC": ("2", "101", "0")}
    assert body["builtThrough"] > event_created_at(100)
