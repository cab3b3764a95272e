"""Sweeps and their gas top-ups on the one outgoing lifecycle (outgoing/follow.py, issue 42), on the
embedded chain: a receipt a node behind withholds is not a reorg, a nonce a foreign transaction
took ends the reservation at its confirmations (fencing the fee wallet, never a deposit address),
and a send whose answer was lost is found mined and completes once."""

from __future__ import annotations

from typing import Any

import pytest
from eth_utils import to_checksum_address

from appliance.common import clock
from appliance.engine.chain.base import ChainError, TransactionRejected
from appliance.engine.custody import FEE_WALLET as FEE_PATH
from appliance.engine.db import database
from appliance.engine.models import (
    Broadcast,
    BroadcastTransition,
    DepositAddress,
    SignedPayload,
    Sweep,
    Wallet,
)
from appliance.engine.outgoing.follow import RESEND_AFTER
from appliance.engine.outgoing.transactions import tx_hash_of
from appliance.engine.sweeps.job import Sweeper
from appliance.engine.sweeps.signing import SWEEP, TOPUP
from appliance.engine.treasury.reconcile import reconcile
from appliance.settings import Settings
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    Harness,
    harness_settings,
    make_harness,
)
from tests.engine.test_payout_receipts_and_nonces import LaggingNode, _mine
from tests.engine.test_sweeps_local import _completed, _deposit, _settle, _sweeper, _sweeps

ELSEWHERE = to_checksum_address("0x" + "ab" * 20)  # where a foreign transaction pays


class Node(LaggingNode):
    """The embedded chain through a provider: ``lagging`` withholds receipts (LaggingNode);
    ``unreachable`` fails every hand-over before it reaches the chain; ``lose_next_answer`` lets
    the next hand-over reach the chain and loses its answer; ``refuses_mined`` answers bytes
    already mined with 'nonce too low' (as geth does; the embedded chain takes them again).
    ``handed`` holds the hash of every hand-over that reached the chain."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.handed: list[str] = []
        self.unreachable = False
        self.lose_next_answer = False
        self.refuses_mined = False

    def send_raw_transaction(self, raw: bytes) -> str:
        if self.unreachable:
            raise ChainError("connection refused")
        self.handed.append(tx_hash_of(raw))
        if self.refuses_mined and self.inner.receipt(tx_hash_of(raw)) is not None:
            raise TransactionRejected("nonce too low")
        tx_hash = super().send_raw_transaction(raw)
        if self.lose_next_answer:
            self.lose_next_answer = False
            raise ChainError("the connection closed before the answer came")
        return tx_hash


def _node_harness(settings: Settings) -> tuple[Harness, Node]:
    harness = make_harness(harness_settings(settings, {}), _mine)
    chains = harness.app.extensions["engine"].chains
    node = Node(chains.get("eth_local"))
    chains.chains["eth_local"] = node
    return harness, node


def _passes(sweeper: Sweeper, count: int = 1) -> None:
    for _ in range(count):
        with database.connection_context():
            sweeper.sweep_pass()


def _broadcast(purpose: str) -> Broadcast:
    with database.connection_context():
        return Broadcast.get(Broadcast.purpose == purpose)


def _sweep(sweep_id: int) -> Sweep:
    with database.connection_context():
        return Sweep.get_by_id(sweep_id)


def _fence_reason(address: str) -> str | None:
    with database.connection_context():
        wallet = Wallet.get_or_none(Wallet.address == address)
    return None if wallet is None else wallet.fence_reason


def _sign_foreign(harness: Harness, path: tuple[int, int], row: Broadcast) -> tuple[bytes, str]:
    """A transaction the engine did not sign: the same key (used elsewhere) at the reservation's
    nonce, paying someone else, with fees that outbid the reservation's."""
    key = harness.app.extensions["engine"].custody.key  # the bare key: no signer's policy
    return key.sign_transaction(
        *path,
        {
            "type": 2,
            "chainId": 1337,
            "nonce": int(row.nonce),
            "to": ELSEWHERE,
            "value": 10**15,
            "data": b"",
            "gas": 21000,
            "maxFeePerGas": 4 * int(row.max_fee_per_gas),
            "maxPriorityFeePerGas": 4 * int(row.max_priority_fee_per_gas),
        },
    )


def _moves(row: Broadcast) -> list[tuple[str | None, str]]:
    with database.connection_context():
        transitions = BroadcastTransition.select().where(BroadcastTransition.broadcast == row.id)
        return [(t.from_status, t.to_status) for t in transitions.order_by(BroadcastTransition.id)]


def test_a_sweep_whose_receipt_a_node_behind_withholds_stays_mined_and_completes_once_it_catches_up(
    settings: Settings,
) -> None:
    harness, node = _node_harness(settings)
    address = _deposit(harness, "ETH", ETHER // 10)
    payout_before = node.inner.balance(PAYOUT_WALLET)
    sweeper = _sweeper(harness)
    _passes(sweeper)  # signed and handed over
    assert len(node.handed) == 1
    node.inner.mine()
    _passes(sweeper)  # its receipt seen: mined, one of two confirmations
    row = _broadcast(SWEEP)
    assert row.status == "mined" and row.mined_block is not None
    node.lagging = True
    for _ in range(3):
        node.inner.mine()  # its block stays canonical; the node serves no receipt of it
        with database.connection_context():  # a send again would be due, were it pending
            Broadcast.update(updated_at=clock.now() - 4 * RESEND_AFTER).execute()
        _passes(sweeper)
        assert _broadcast(SWEEP).status == "mined"  # not sent back to signed as if reorganised
        assert [s.status for s in _sweeps()] == ["sent"]
    assert len(node.handed) == 1  # no second hand-over
    node.lagging = False
    _settle(harness, _completed(), sweeper, passes=5)
    (sweep,) = _sweeps()
    row = _broadcast(SWEEP)
    assert row.status == "final" and sweep.tx_hash == row.mined_tx_hash == node.handed[0]
    assert _moves(row) == [(None, "signed"), ("signed", "sent"), ("sent", "mined"), ("mined", "final")]
    assert node.inner.balance(PAYOUT_WALLET) == payout_before + int(sweep.amount_minor)
    assert node.inner.nonce(address) == 1 and len(node.handed) == 1


def test_a_gas_top_up_whose_nonce_a_foreign_transaction_took_fences_the_fee_wallet_and_fails_the_sweep(
    settings: Settings,
) -> None:
    harness, node = _node_harness(settings)
    node.inner.faucet("ETH", FEE_WALLET, ETHER)
    address = _deposit(harness, "USDC", 5_000_000)
    usdc = harness.app.extensions["engine"].chains.find("eth_local", "USDC").contract
    sweeper = _sweeper(harness)
    node.unreachable = True
    _passes(sweeper)  # the top-up is signed and stored; the node is not reached
    node.unreachable = False
    topup = _broadcast(TOPUP)
    (sweep,) = _sweeps()
    assert (topup.status, sweep.status, sweep.topup_id) == ("signed", "topping_up", topup.id)
    raw, foreign = _sign_foreign(harness, FEE_PATH, topup)
    node.inner.send_raw_transaction(raw)
    node.inner.mine()  # the foreign transaction holds the top-up's nonce, one confirmation
    _passes(sweeper)  # the top-up's bytes are refused: the nonce is looked up
    fenced = _fence_reason(FEE_WALLET)
    assert fenced is not None and foreign in fenced  # fenced at once
    assert _broadcast(TOPUP).status == "signed"  # a reorg may still give the nonce back
    assert _sweep(sweep.id).status == "topping_up"
    node.inner.mine()  # the native asset's two confirmations
    for _ in range(3):
        if _broadcast(TOPUP).status == "final":
            break
        _passes(sweeper)
    assert _broadcast(TOPUP).status == "final"
    failed = _sweep(sweep.id)
    assert failed.status == "failed" and foreign in (failed.reason or "")
    assert foreign in (_fence_reason(FEE_WALLET) or "")
    # Nothing of the token moved, and the address signed nothing.
    assert node.inner.balance(address, usdc) == 5_000_000 and node.inner.balance(PAYOUT_WALLET, usdc) == 0
    assert node.inner.nonce(address) == 0
    with database.connection_context():
        assert [b.purpose for b in Broadcast.select()] == [TOPUP]


def _sweep_whose_nonce_a_foreign_transaction_took(settings: Settings) -> tuple[Harness, str, str]:
    """A native sweep signed (its node unreachable), then its nonce taken by a transaction the
    deposit address's key signed elsewhere, followed until the sweep fails; checks it is open
    below the confirmations and fails at them. Returns (harness, address, foreign hash)."""
    harness, node = _node_harness(settings)
    address = _deposit(harness, "ETH", ETHER // 10)
    with database.connection_context():
        deposit = DepositAddress.get(DepositAddress.address == address)
    sweeper = _sweeper(harness)
    node.unreachable = True
    _passes(sweeper)  # the sweep is signed and stored; the node is not reached
    node.unreachable = False
    row = _broadcast(SWEEP)
    (sweep,) = _sweeps()
    assert (row.status, sweep.status) == ("signed", "signed")
    raw, foreign = _sign_foreign(harness, (int(deposit.custody_account), int(deposit.derivation_index)), row)
    node.inner.send_raw_transaction(raw)
    node.inner.mine()  # the foreign transaction holds the sweep's nonce, one confirmation
    # Passes some time apart (a look at a used nonce may be spaced out), the clock held still.
    clock.freeze(clock.now())
    try:
        clock.advance(RESEND_AFTER)
        _passes(sweeper)
        assert _sweep(sweep.id).status in ("signed", "sent")  # still open: a reorg may give it back
        assert _broadcast(SWEEP).status != "final"
        node.inner.mine()  # the asset's two confirmations
        for _ in range(3):
            if _sweep(sweep.id).status == "failed":
                break
            clock.advance(RESEND_AFTER)
            _passes(sweeper)
    finally:
        clock.reset()
    failed = _sweep(sweep.id)
    assert failed.status == "failed" and foreign in (failed.reason or "")
    assert failed.amount_minor == "0"
    assert _broadcast(SWEEP).status == "final"
    return harness, address, foreign


def _unknown_outflows(harness: Harness) -> list[dict[str, Any]]:
    runtime = harness.app.extensions["engine"]
    with database.connection_context():
        found = reconcile(runtime.chains, runtime.custody)["findings"]
    return [f for f in found if f["kind"] == "unknown_outflow"]


def test_a_sweep_whose_nonce_a_foreign_transaction_took_fails_at_its_confirmations_without_fencing(
    settings: Settings,
) -> None:
    harness, address, _ = _sweep_whose_nonce_a_foreign_transaction_took(settings)
    assert _fence_reason(address) is None  # a deposit address is not fenced
    (outflow,) = _unknown_outflows(harness)
    assert outflow["address"] == address
    assert outflow["detail"].startswith(
        "nonce 0: the nonce the engine reserved was used by another transaction"
    )


def test_the_reconcile_names_the_foreign_transaction_that_took_a_sweep_s_nonce_on_the_embedded_chain(
    settings: Settings,
) -> None:
    harness, _, foreign = _sweep_whose_nonce_a_foreign_transaction_took(settings)
    (outflow,) = _unknown_outflows(harness)
    assert foreign in outflow["detail"]


@pytest.mark.parametrize(
    ("refuses_mined", "after_the_look"),
    # A node taking the bytes again: sent (mined at the look after); "nonce too low": mined now.
    [(False, {"sent", "mined"}), (True, {"mined"})],
    ids=["node-takes-mined-bytes-again", "node-refuses-mined-bytes-as-nonce-too-low"],
)
def test_a_sweep_sent_whose_answer_was_lost_and_then_mined_completes_exactly_once(
    settings: Settings, refuses_mined: bool, after_the_look: set[str]
) -> None:
    harness, node = _node_harness(settings)
    node.refuses_mined = refuses_mined
    address = _deposit(harness, "ETH", ETHER // 10)
    payout_before = node.inner.balance(PAYOUT_WALLET)
    sweeper = _sweeper(harness)
    node.lose_next_answer = True
    _passes(sweeper)  # the chain took the bytes; the engine never heard so
    (sweep,) = _sweeps()
    row = _broadcast(SWEEP)
    assert (sweep.status, row.status, node.handed) == ("signed", "signed", [row.tx_hash])
    node.inner.mine()  # and mined
    _passes(sweeper)  # the next look
    row = _broadcast(SWEEP)
    # The sweep moves with its reservation: never left signed while its transaction is in a block.
    assert row.status in after_the_look and _sweep(sweep.id).status == "sent"
    if row.status == "mined":
        assert row.mined_tx_hash == row.tx_hash
    _settle(harness, _completed(), sweeper, passes=6)
    for _ in range(3):  # later passes change nothing
        node.inner.mine()
        _passes(sweeper)
    (done,) = _sweeps()
    assert done.status == "completed" and done.tx_hash == row.tx_hash
    assert node.inner.balance(PAYOUT_WALLET) == payout_before + int(done.amount_minor)
    assert node.inner.nonce(address) == 1
    with database.connection_context():
        assert Broadcast.select().count() == 1 and SignedPayload.select().count() == 1
        assert Broadcast.get().status == "final"
    assert set(node.handed) == {row.tx_hash}
