"""appliance.engine.outgoing.state.transition against every pair of statuses, on the engine's own
database (rows written directly, no chain): what tests/engine/test_broadcast_states.py checks
through a real payout (the path signed → sent → mined → final, final → sent refused, a stale copy,
a move outside a transaction) is here extended to the whole table, and to what a refused move
leaves behind: nothing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from appliance.common.db import write_transaction
from appliance.engine.db import database
from appliance.engine.models import Broadcast, BroadcastTransition
from appliance.engine.outgoing import state

# The moves the state machine's documentation allows, written out apart from its table.
ALLOWED = {
    ("signed", "signed"),  # replaced at its nonce
    ("signed", "sent"),
    ("signed", "mined"),
    ("signed", "final"),
    ("sent", "signed"),  # replaced at its nonce
    ("sent", "sent"),  # sent again
    ("sent", "mined"),
    ("sent", "final"),
    ("mined", "signed"),  # its block left the canonical chain, or a cancellation
    ("mined", "mined"),  # another block holds it now
    ("mined", "final"),
}
STATUSES = ("signed", "sent", "mined", "final")


def stored(status: str, nonce: int) -> Broadcast:
    with write_transaction(database):
        return Broadcast.create(
            purpose="gas_topup",
            chain_id="eth_local",
            wallet="0x" + "5a" * 20,
            nonce=nonce,
            raw="0x02",
            digest="sha256:" + "0" * 64,
            tx_hash=f"0x{nonce:064x}",
            max_fee_per_gas="21000000000",
            max_priority_fee_per_gas="1000000000",
            gas_limit=21_000,
            status=status,
        )


def transitions(broadcast: Broadcast) -> list[tuple[str | None, str]]:
    rows = BroadcastTransition.select().where(BroadcastTransition.broadcast == broadcast.id)
    return [(row.from_status, row.to_status) for row in rows.order_by(BroadcastTransition.id)]


def row_of(broadcast: Broadcast) -> dict[str, Any]:
    return Broadcast.select().where(Broadcast.id == broadcast.id).dicts().get()


def test_the_table_allows_exactly_the_documented_moves() -> None:
    assert {(a, b) for a, moves in state.LEGAL_MOVES.items() for b in moves} == ALLOWED
    assert set(state.LEGAL_MOVES) == set(STATUSES)


def test_every_move_of_the_table_is_made_or_refused_as_documented_and_a_refusal_writes_nothing(
    engine_app,
) -> None:
    with database.connection_context():
        for nonce, (current, to) in enumerate(itertools.product(STATUSES, STATUSES)):
            broadcast = stored(current, nonce)
            before = row_of(broadcast)
            if (current, to) in ALLOWED:
                with write_transaction(database):
                    state.transition(broadcast, to, mined_block=7)
                assert row_of(broadcast)["status"] == to, (current, to)
                assert row_of(broadcast)["mined_block"] == 7, (current, to)
                # A move to the same status rewrites the fields and records no move.
                assert transitions(broadcast) == ([] if to == current else [(current, to)]), (current, to)
            else:
                with pytest.raises(state.IllegalMove), write_transaction(database):
                    state.transition(broadcast, to, mined_block=7)
                assert row_of(broadcast) == before, (current, to)
                assert transitions(broadcast) == [], (current, to)
                assert broadcast.status == current and broadcast.mined_block is None


def test_a_move_to_a_status_outside_the_table_is_illegal_from_every_status(engine_app) -> None:
    with database.connection_context():
        for nonce, current in enumerate(STATUSES):
            broadcast = stored(current, 100 + nonce)
            with pytest.raises(state.IllegalMove), write_transaction(database):
                state.transition(broadcast, "dropped")
            assert row_of(broadcast)["status"] == current


def test_a_stale_copy_writes_neither_its_status_nor_its_fields_nor_a_move(engine_app) -> None:
    with database.connection_context():
        fresh = stored("signed", 200)
        stale = Broadcast.get_by_id(fresh.id)
        with write_transaction(database):
            state.transition(fresh, "sent")
        after_first = row_of(fresh)
        for to in ("signed", "sent", "mined", "final"):  # every move the stale copy thinks legal
            with pytest.raises(state.StaleBroadcast), write_transaction(database):
                state.transition(stale, to, mined_block=9, fee_minor="5")
            assert row_of(fresh) == after_first, to
            assert transitions(fresh) == [("signed", "sent")], to
            assert stale.status == "signed" and stale.mined_block is None and stale.fee_minor is None


@pytest.mark.parametrize("to", ["sent", "dropped"])
def test_a_move_outside_a_write_transaction_writes_nothing_legal_or_not(engine_app, to: str) -> None:
    with database.connection_context():
        broadcast = stored("signed", 300)
        before = row_of(broadcast)
        with pytest.raises(state.OutsideTransaction):
            state.transition(broadcast, to, mined_block=7)
        assert row_of(broadcast) == before
        assert transitions(broadcast) == []
        assert broadcast.status == "signed"
