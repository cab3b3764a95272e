"""Issue 29, items 1 and 7 on the embedded chain: a receipt missing for a moment is not a reorg and
never makes a paid payout FAILED; a nonce consumed by a transaction the engine did not sign fences
the wallet and fails the payout (nothing of it can land) instead of leaving it BROADCAST for ever."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from eth_utils import to_checksum_address

from appliance.common import clock
from appliance.engine.chain.base import ChainError, Receipt, TransactionRejected
from appliance.engine.chain.local import LocalChain
from appliance.engine.custody import PAYOUT_WALLET as PAYOUT_PATH
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Wallet
from appliance.settings import Settings
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, Harness, harness_settings, make_harness


def dest(n: int) -> str:
    return f"0x{0xA000 + n:040x}"


class LaggingNode:
    """The embedded chain seen through a provider one block behind: while ``lagging``, no receipt
    is found and a re-send of mined bytes is refused with 'nonce too low' (what a node that has
    the transaction mined but serves receipts from a node behind answers)."""

    def __init__(self, inner: LocalChain) -> None:
        self.inner = inner
        self.lagging = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def receipt(self, tx_hash: str) -> Receipt | None:
        return None if self.lagging else self.inner.receipt(tx_hash)

    def send_raw_transaction(self, raw: bytes) -> str:
        if self.lagging:
            raise TransactionRejected("nonce too low")
        return self.inner.send_raw_transaction(raw)


def _mine(app: Any) -> None:
    chain = app.extensions["engine"].chains.get("eth_local")
    getattr(chain, "inner", chain).mine()


def lagging_harness(settings: Settings) -> tuple[Harness, LaggingNode]:
    harness = make_harness(harness_settings(settings, {}), _mine)
    chains = harness.app.extensions["engine"].chains
    node = LaggingNode(chains.get("eth_local"))
    chains.chains["eth_local"] = node
    node.inner.faucet("ETH", PAYOUT_WALLET, ETHER)
    return harness, node


def test_a_receipt_missing_for_a_moment_after_it_was_seen_is_not_a_reorg(settings: Settings) -> None:
    harness, node = lagging_harness(settings)
    harness.submit("pyo_lagging001", 5150, destination=dest(1))
    harness.until_status("pyo_lagging001", "BROADCAST", mine=False)
    node.inner.mine()
    harness.run_pass()  # sees the receipt and records its block (1 of 2 confirmations)
    with database.connection_context():
        assert Broadcast.get().mined_block is not None
    node.lagging = True
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
    assert harness.payout("pyo_lagging001").status == "BROADCAST"  # not SIGNED, not FAILED
    node.lagging = False
    harness.until_status("pyo_lagging001", "COMPLETED")
    transitions = [(t["from"], t["to"]) for t in harness.detail("pyo_lagging001")["transitions"]]
    assert ("BROADCAST", "SIGNED") not in transitions
    assert node.inner.balance(dest(1)) == 5150


def test_nonce_too_low_without_a_receipt_is_never_failed_while_it_was_paid(settings: Settings) -> None:
    harness, node = lagging_harness(settings)
    harness.submit("pyo_lagging002", 6160, destination=dest(2))
    harness.until_status("pyo_lagging002", "SIGNED", mine=False)
    with database.connection_context():
        raw = bytes.fromhex(Broadcast.get().raw)
    node.inner.send_raw_transaction(raw)  # a send whose answer was lost (the worker died)
    node.inner.mine()
    node.lagging = True  # the receipt not served yet; the send meets "nonce too low"
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
    assert harness.payout("pyo_lagging002").status == "BROADCAST"
    node.lagging = False
    harness.until_status("pyo_lagging002", "COMPLETED")
    assert node.inner.balance(dest(2)) == 6160


def test_a_nonce_used_by_a_transaction_the_engine_did_not_sign_fences_and_fails_the_payout(
    settings: Settings,
) -> None:
    harness, node = lagging_harness(settings)
    chain = node.inner
    harness.submit("pyo_foreign001", 7170, destination=dest(3))
    harness.until_status("pyo_foreign001", "BROADCAST", mine=False)
    # The same key used elsewhere replaces it in the pool at its nonce, paying someone else.
    custody = harness.app.extensions["engine"].custody.key  # the bare key: no signer's policy
    with database.connection_context():
        broadcast = Broadcast.get()
    raw, foreign = custody.sign_transaction(
        *PAYOUT_PATH,
        {
            "type": 2,
            "chainId": 1337,
            "nonce": int(broadcast.nonce),
            "to": to_checksum_address(dest(99)),
            "value": 1,
            "data": b"",
            "gas": 21000,
            "maxFeePerGas": 4 * int(broadcast.max_fee_per_gas),
            "maxPriorityFeePerGas": 4 * int(broadcast.max_priority_fee_per_gas),
        },
    )
    chain.send_raw_transaction(raw)
    chain.mine()
    chain.mine()
    with database.connection_context():
        Broadcast.update(updated_at=clock.now() - timedelta(minutes=1)).execute()  # re-send due
    harness.until_status("pyo_foreign001", "FAILED", mine=False)
    payout = harness.payout("pyo_foreign001")
    assert foreign in payout.reason and "did not sign" in payout.reason
    assert chain.balance(dest(3)) == 0
    with database.connection_context():
        fenced = Wallet.get(Wallet.address == PAYOUT_WALLET).fence_reason
    assert fenced and foreign in fenced
    # Nothing more is signed for the wallet.
    harness.submit("pyo_foreign002", 1, destination=dest(4))
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
    assert harness.payout("pyo_foreign002").status == "REQUESTED"
    assert "stopped" in (harness.payout("pyo_foreign002").reason or "")


class Interleaved:
    """The chain as a first node sees it while a second node signs in between: the first
    balance read runs ``meanwhile`` (the other node's whole preparation) before answering."""

    def __init__(self, inner: Any, meanwhile: Any) -> None:
        self.inner = inner
        self.meanwhile = meanwhile

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def balance(self, address: str, contract: str | None = None) -> int:
        answer = self.inner.balance(address, contract)
        if self.meanwhile is not None:
            run, self.meanwhile = self.meanwhile, None
            run()
        return answer


def test_two_nodes_never_both_sign_payouts_the_balance_covers_only_one_of(settings: Settings) -> None:
    """Issue 29 item 2: the balance and the in-flight sum are read again under the lock that
    reserves the nonce (on PostgreSQL the wallet row FOR UPDATE), so two 0.6 ETH payouts from a
    1 ETH wallet are never both signed."""
    from appliance.engine.models import Payout
    from appliance.engine.payouts.pipeline import Pipeline

    harness = make_harness(harness_settings(settings, {}), _mine)
    chains = harness.app.extensions["engine"].chains
    local = chains.get("eth_local")
    local.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_overspend1", 6 * ETHER // 10, destination=dest(11))
    harness.submit("pyo_overspend2", 6 * ETHER // 10, destination=dest(12))
    other = Pipeline(chains, harness.pipeline.custody)

    def other_node_signs_the_second() -> None:
        with database.connection_context():
            other.step(Payout.get(Payout.payout_id == "pyo_overspend2"))

    chains.chains["eth_local"] = Interleaved(local, other_node_signs_the_second)
    with database.connection_context():
        harness.pipeline.step(Payout.get(Payout.payout_id == "pyo_overspend1"))
    chains.chains["eth_local"] = local
    assert harness.payout("pyo_overspend2").status == "SIGNED"
    first = harness.payout("pyo_overspend1")
    assert first.status == "REQUESTED"
    assert "unfunded" in (first.reason or "")
    with database.connection_context():
        assert Broadcast.select().count() == 1


def test_a_gas_top_up_whose_nonce_a_foreign_transaction_took_ends_and_fences_the_fee_wallet(
    settings: Settings,
) -> None:
    """Issue 29 item 6: a top-up meeting "nonce too low" was retried for ever and every payout
    needing gas waited behind it; now the transaction at its nonce is looked up, and a foreign
    one fences the fee wallet at once (with the reason on the waiting payout) and ends the top-up
    once it has the native asset's confirmations (two here), as a payout's would: below them a
    reorg may still give the nonce back (issue 42: one lifecycle for every transaction)."""
    from appliance.engine.custody import FEE_WALLET as FEE_PATH
    from tests.engine.pipeline_harness import FEE_WALLET

    harness = make_harness(harness_settings(settings, {}), _mine)
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("USDC", PAYOUT_WALLET, 5_000_000)
    chain.faucet("ETH", FEE_WALLET, ETHER)
    harness.submit("pyo_topupnon01", 1_000_000, asset="USDC", destination=dest(21))
    harness.run_pass()  # signs the fee wallet's top-up (not sent yet)
    with database.connection_context():
        topup = Broadcast.get(Broadcast.purpose == "gas_topup")
    raw, foreign = harness.app.extensions["engine"].custody.key.sign_transaction(
        *FEE_PATH,
        {
            "type": 2,
            "chainId": 1337,
            "nonce": int(topup.nonce),
            "to": to_checksum_address(dest(22)),
            "value": 1,
            "data": b"",
            "gas": 21000,
            "maxFeePerGas": 4 * int(topup.max_fee_per_gas),
            "maxPriorityFeePerGas": 4 * int(topup.max_priority_fee_per_gas),
        },
    )
    chain.send_raw_transaction(raw)
    chain.mine()
    harness.skip_waits()
    harness.run_pass()
    with database.connection_context():
        assert Broadcast.get(Broadcast.id == topup.id).status == "signed"  # one confirmation
        assert foreign in (Wallet.get(Wallet.address == FEE_WALLET).fence_reason or "")
    chain.mine()
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
    with database.connection_context():
        assert Broadcast.get(Broadcast.id == topup.id).status == "final"
        fenced = Wallet.get(Wallet.address == FEE_WALLET).fence_reason
    assert fenced and foreign in fenced
    reason = harness.payout("pyo_topupnon01").reason or ""
    assert "signing for the fee wallet on eth_local is stopped" in reason


class CountingNode(LaggingNode):
    """Counts the receipt and nonce questions asked of the node."""

    def __init__(self, inner: LocalChain) -> None:
        super().__init__(inner)
        self.asked = {"receipt": 0, "nonce": 0}

    def receipt(self, tx_hash: str) -> Receipt | None:
        self.asked["receipt"] += 1
        return super().receipt(tx_hash)

    def nonce(self, address: str) -> int:
        self.asked["nonce"] += 1
        return self.inner.nonce(address)


def test_a_payout_replaced_many_times_costs_one_question_per_poll_until_its_nonce_is_mined(
    settings: Settings,
) -> None:
    # A fee spike: a payload per replacement, all kept (any of them may be the one mined). While
    # the wallet's nonce has not passed the reservation's, one question answers for all of them.
    from appliance.engine.chain.base import FeeQuote
    from appliance.engine.outgoing import transactions

    harness, node = lagging_harness(settings)
    harness.submit("pyo_replaced001", 8180, destination=dest(5))
    harness.until_status("pyo_replaced001", "BROADCAST", mine=False)
    custody = harness.app.extensions["engine"].custody
    with database.connection_context():
        for bump in range(1, 6):
            broadcast = Broadcast.get()
            fees = FeeQuote(
                int(broadcast.max_fee_per_gas) * (bump + 1),
                int(broadcast.max_priority_fee_per_gas) * (bump + 1),
            )
            to, value, data = transactions.decode_call(broadcast)
            with database.atomic():
                transactions.replace(custody, PAYOUT_PATH, broadcast, 1337, to, value, data, fees)
        broadcast = Broadcast.get()
        counting = CountingNode(node.inner)
        assert transactions.mined_payload(counting, broadcast) is None
        assert counting.asked == {"receipt": 0, "nonce": 1}  # not six receipt look-ups
        node.inner.mine()  # the first payload (the one sent) is mined, not the one in force
        receipt = transactions.mined_payload(counting, broadcast)
    assert receipt is not None and receipt.tx_hash != broadcast.tx_hash
    assert counting.asked["receipt"] >= 2


class ScanCountingNode(LaggingNode):
    """Counts the blocks read transaction by transaction; ``archive`` False answers the state of
    the last 128 blocks only (a full node), so an older one is read block by block."""

    def __init__(self, inner: LocalChain, archive: bool = True) -> None:
        super().__init__(inner)
        self.archive = archive
        self.blocks_read = 0

    def nonce_at(self, address: str, number: int) -> int:
        if not self.archive and number < self.inner.head().number - 128:
            raise ChainError("missing trie node (a full node keeps recent state only)")
        return self.inner.nonce_at(address, number)

    def account_transactions(self, sender: str, from_block: int, to_block: int) -> list:
        self.blocks_read += to_block - from_block + 1
        return self.inner.account_transactions(sender, from_block, to_block)


@pytest.mark.parametrize(
    ("archive", "mined_late", "blocks_read"),
    [(True, True, 1), (True, False, 1), (False, True, 1), (False, False, 200)],
    ids=["archive-mined-late", "archive-mined-early", "full-node-mined-late", "full-node-mined-early"],
)
def test_a_used_nonce_is_found_by_reading_its_block_not_every_block_since_the_signing(
    settings: Settings, archive: bool, mined_late: bool, blocks_read: int
) -> None:
    # The send met "nonce too low" and no receipt is served (a node behind): the transaction at
    # that nonce is looked up on chain. Mined hours after the signing (a node had dropped it) or
    # just after it with hours of blocks since: one block read, but on a full node for an old one.
    harness = make_harness(harness_settings(settings, {}), _mine)
    chains = harness.app.extensions["engine"].chains
    node = ScanCountingNode(chains.get("eth_local"), archive=archive)
    chains.chains["eth_local"] = node
    node.inner.faucet("ETH", PAYOUT_WALLET, ETHER)
    harness.submit("pyo_latemined01", 9190, destination=dest(6))
    harness.until_status("pyo_latemined01", "SIGNED", mine=False)
    with database.connection_context():
        raw = bytes.fromhex(Broadcast.get().raw)
    if mined_late:
        for _ in range(200):
            node.inner.mine()
    node.inner.send_raw_transaction(raw)  # sent, the answer lost, and mined
    node.inner.mine()
    if not mined_late:
        for _ in range(200):
            node.inner.mine()
    node.lagging = True
    harness.skip_waits()
    harness.run_pass()
    assert harness.payout("pyo_latemined01").status == "BROADCAST"  # found: ours, mined
    if blocks_read == 1:
        assert node.blocks_read == 1
    else:  # every block since the signing, as before
        assert node.blocks_read > blocks_read
    node.lagging = False
    harness.until_status("pyo_latemined01", "COMPLETED")
    assert node.inner.balance(dest(6)) == 9190
