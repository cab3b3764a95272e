"""A broadcast's status (signed, sent, mined, final) moves only through the table of
appliance.engine.outgoing.state: every move is a compare-and-set recorded in broadcast_transition,
in the transaction of the move (issue 42)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import appliance
from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.models import Broadcast, BroadcastTransition
from appliance.engine.outgoing import state
from appliance.settings import Settings
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, Harness, harness_settings, make_harness

SOURCE = Path(appliance.__file__).parent
THE_TABLE = "engine/outgoing/state.py"


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


def broadcast_writes(source: str) -> list[int]:
    """Lines of ``Broadcast.update(...)`` and ``Broadcast.insert(...)``-style writes of the model."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("update", "insert", "replace", "insert_many")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "Broadcast"
    ]


def test_no_code_but_the_state_table_writes_a_broadcast_row_in_place() -> None:
    offences = [
        f"{path.relative_to(SOURCE).as_posix()}:{line}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.relative_to(SOURCE).as_posix() != THE_TABLE
        for line in broadcast_writes(path.read_text())
    ]
    assert not offences, "move a broadcast with outgoing.state.transition: " + ", ".join(offences)


def test_a_completed_payouts_broadcast_went_signed_sent_mined_final_each_move_recorded(
    harness: Harness,
) -> None:
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_bcstates01", 4242, destination=f"0x{0xE100:040x}")
    harness.until_status("pyo_bcstates01", "COMPLETED")
    with database.connection_context():
        broadcast = Broadcast.get(Broadcast.purpose == "payout")
        moves = [
            (t.from_status, t.to_status)
            for t in BroadcastTransition.select()
            .where(BroadcastTransition.broadcast == broadcast.id)
            .order_by(BroadcastTransition.id)
        ]
    assert broadcast.status == "final"
    assert moves == [(None, "signed"), ("signed", "sent"), ("sent", "mined"), ("mined", "final")]


def test_a_final_broadcast_cannot_move_again_and_nothing_is_written(harness: Harness) -> None:
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_bcstates02", 4243, destination=f"0x{0xE101:040x}")
    harness.until_status("pyo_bcstates02", "COMPLETED")
    with database.connection_context():
        broadcast = Broadcast.get(Broadcast.purpose == "payout")
        recorded = BroadcastTransition.select().count()
        with pytest.raises(state.IllegalMove), write_transaction(database):
            state.transition(broadcast, "sent")
        assert Broadcast.get_by_id(broadcast.id).status == "final"
        assert BroadcastTransition.select().count() == recorded


def test_a_stale_copy_cannot_move_a_broadcast_another_worker_moved(harness: Harness) -> None:
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_bcstates03", 4244, destination=f"0x{0xE102:040x}")
    harness.until_status("pyo_bcstates03", "SIGNED", mine=False)
    with database.connection_context():
        first = Broadcast.get(Broadcast.purpose == "payout")
        stale = Broadcast.get_by_id(first.id)
        with write_transaction(database):
            state.transition(first, "sent")
        with pytest.raises(state.StaleBroadcast), write_transaction(database):
            state.transition(stale, "mined")
        assert Broadcast.get_by_id(first.id).status == "sent"


def test_a_move_outside_a_write_transaction_is_refused(harness: Harness) -> None:
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_bcstates04", 4245, destination=f"0x{0xE103:040x}")
    harness.until_status("pyo_bcstates04", "SIGNED", mine=False)
    with database.connection_context():
        broadcast = Broadcast.get(Broadcast.purpose == "payout")
        with pytest.raises(state.OutsideTransaction):
            state.transition(broadcast, "sent")
        assert Broadcast.get_by_id(broadcast.id).status == "signed"
