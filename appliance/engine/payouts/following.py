"""A signed payout on its way: SIGNED → BROADCAST → COMPLETED (or FAILED), on the reservation's
lifecycle (appliance.engine.outgoing): the payout's side of each step (its attempts, its status
moves, its ledger and webhooks) in the transaction of the broadcast's own move.

- SIGNED: send the stored bytes; every send is an attempt {occurredAt, outcome, txHash}; accepted
  bytes move the payout to BROADCAST.
- BROADCAST: look for a receipt of any payload signed at its nonce. With the asset's confirmations
  it is COMPLETED (or FAILED when it reverted). A transaction that was mined and is no longer in
  the canonical chain (a reorg shallower than the confirmations) goes back to SIGNED and the SAME
  bytes are sent again. A transaction stuck below the market fee is replaced at the same nonce.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.base import Chain, ChainError, ChainTransaction, FeeQuote, Receipt
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import PAYOUT_WALLET, CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.models import Broadcast, Payout, PayoutAttempt, SignedPayload
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, transactions
from appliance.engine.outgoing.fencing import Fencing
from appliance.engine.payouts.readiness import REASON_LENGTH, Wait
from appliance.engine.payouts.service import entry
from appliance.engine.payouts.state import PAID, StaleMove, transition
from appliance.engine.webhooks.events import PAYOUT_COMPLETED, PAYOUT_FAILED, emit

log = logging.getLogger("appliance.engine.payouts")


@dataclasses.dataclass
class Outcome:
    """What a step asks of the queue: come back after ``after`` (None: as soon as possible)."""

    after: timedelta | None = None


def wait_on(payout: Payout, reason: str | Wait, after: timedelta | None = None) -> Outcome:
    """Keep waiting in the same status with a reason on the detail (no status move)."""
    if isinstance(reason, Wait):
        after = reason.kind.delay
        reason = reason.reason
    reason = reason[:REASON_LENGTH]
    if payout.reason != reason:
        Payout.update(reason=reason, updated_at=clock.now()).where(
            (Payout.id == payout.id) & (Payout.status == payout.status)
        ).execute()
        log.info("payout %s waits: %s", payout.payout_id, reason)
    return Outcome(after or timedelta(seconds=2))


class PayoutFollowing:
    """SIGNED and BROADCAST payouts, each one look (follow.follow) at its reservation with the
    payout's side of every move (PayoutSide), and the payout's end once the receipt is final."""

    def __init__(
        self,
        chains: Chains,
        custody: CustodyKeys | None,
        fencing: Fencing,
        ceilings: dict[str, int],
        poll: timedelta,
    ) -> None:
        self.chains, self.custody, self.fencing = chains, custody, fencing
        self.ceilings, self.poll = ceilings, poll

    def _chain(self, broadcast: Broadcast) -> Chain:
        chain = self.chains.get(broadcast.chain_id)
        if chain is None:
            raise ChainError(f"chain {broadcast.chain_id} is not configured on this deployment")
        return chain

    def advance(self, payout: Payout, broadcast: Broadcast) -> Outcome:
        chain = self._chain(broadcast)
        asset = self.chains.find(payout.chain_id, payout.asset)
        confirmations = asset.confirmations if asset else 1
        course = follow.Course(confirmations, lambda: chain.head().number, self.fencing, self.poll)
        look = follow.follow(chain, broadcast, course, PayoutSide(self, payout))
        if look.receipt is None:
            return Outcome(look.after)
        self._finish(payout, broadcast, asset, look.receipt)
        return Outcome()

    def _finish(self, payout: Payout, broadcast: Broadcast, asset: Asset | None, receipt: Receipt) -> None:
        """COMPLETED (or COMPLETED_SHORT, or FAILED when it reverted, moved nothing or was the
        operator's cancellation), with the fee charged and the webhook queued, in one transaction."""
        fee = str(receipt.gas_used * receipt.effective_gas_price)
        moved = _moved(payout, asset, broadcast.wallet, receipt) if receipt.success else None
        failure = (
            None
            if receipt.success
            else "the transaction reverted on chain; nothing was paid (the network fee was)"
        )
        mined = SignedPayload.get_or_none(
            (SignedPayload.broadcast == broadcast.id) & (SignedPayload.tx_hash == receipt.tx_hash)
        )
        if mined is not None and transactions.is_cancel(mined.raw, broadcast.wallet):
            failure = (
                f"cancelled by the operator: nonce {broadcast.nonce} was taken by the zero-value "
                f"self-transfer {receipt.tx_hash}; nothing was paid (its network fee was)"
            )
        elif moved is not None and moved.nothing:
            failure = moved.reason(asset)
        with write_transaction(database):
            follow.finalise(broadcast, receipt)
            if failure is not None or moved is None:
                transition(payout, "FAILED", tx_hash=receipt.tx_hash, fee_minor=fee, reason=failure)
            else:
                transition(
                    payout,
                    "COMPLETED_SHORT" if moved.short else "COMPLETED",
                    tx_hash=receipt.tx_hash,
                    fee_minor=fee,
                    delivered_minor=str(moved.delivered),
                    debited_minor=str(moved.debited),
                    reason=moved.reason(asset) if moved.short else None,
                )
            # The amount settled (or was released) in transition; the fee paid is the operator's too.
            book.charge_fee(payout, self.chains.native(payout.chain_id).code)
            announce(payout, self.chains.native(payout.chain_id).code)


class PayoutSide(follow.Side):
    """A payout's side of its reservation's moves: its attempts, SIGNED ⇄ BROADCAST, FAILED when
    a foreign transaction took its nonce, the reason it waits on its detail."""

    noun = "payout"
    role = "payout"
    keeps_attempts = True

    def __init__(self, following: PayoutFollowing, payout: Payout) -> None:
        self.following, self.payout = following, payout

    def attempt(self, row: Broadcast, outcome: str, tx_hash: str | None) -> None:
        PayoutAttempt.create(payout=self.payout.id, outcome=outcome, tx_hash=tx_hash, occurred_at=clock.now())

    def sent(self, row: Broadcast, tx_hash: str) -> None:
        if self.payout.status == "SIGNED":
            transition(self.payout, "BROADCAST", tx_hash=tx_hash)

    def reorged(self, row: Broadcast, block: int) -> None:
        if self.payout.status == "BROADCAST":
            transition(
                self.payout,
                "SIGNED",
                reason=f"block {block} left the canonical chain (reorg); re-sending the same signed bytes",
            )

    def adopted(self, row: Broadcast, tx_hash: str) -> None:
        payout = self.payout
        Payout.update(signed_payload_digest=row.digest, tx_hash=tx_hash, updated_at=clock.now()).where(
            Payout.id == payout.id
        ).execute()
        if payout.status == "SIGNED":
            transition(payout, "BROADCAST", tx_hash=tx_hash)

    def taken(self, row: Broadcast, tx: ChainTransaction) -> None:
        transition(
            self.payout,
            "FAILED",
            reason=f"nonce {row.nonce} of {row.wallet} was used by {tx.tx_hash}, a transaction the "
            "engine did not sign; nothing of this payout was paid or can land",
        )
        announce(self.payout, self.following.chains.native(self.payout.chain_id).code)

    def wait(self, reason: str) -> None:
        wait_on(self.payout, reason)

    def bump(self, row: Broadcast, market: FeeQuote) -> Broadcast | None:
        """Replace the payload in force at the same nonce with higher fees, stored before sending."""
        payout, chains, ceiling = (
            self.payout,
            self.following.chains,
            self.following.ceilings.get(row.chain_id),
        )
        custody = self.following.custody
        assert custody is not None
        fees = fee_rules.bumped_fees(row, market, ceiling)
        if fees is None:  # the replacement would have to offer more than the ceiling
            wait_on(
                payout,
                f"stuck below the market at nonce {row.nonce}; a replacement would exceed "
                f"{row.chain_id}'s max_fee_per_gas ({ceiling} wei per gas): it waits for the fee to "
                "fall (or `appliance payout cancel`)",
            )
            return None
        to, value, data = transactions.decode_call(row)
        network_id = chains.native(row.chain_id).network_id
        with write_transaction(database):
            transactions.replace(custody, PAYOUT_WALLET, row, network_id, to, value, data, fees)
            changed = (
                Payout.update(signed_payload_digest=row.digest, tx_hash=row.tx_hash, updated_at=clock.now())
                .where((Payout.id == payout.id) & (Payout.status == payout.status))
                .execute()
            )
            if not changed:
                raise StaleMove(f"payout {payout.id} moved while its fee was bumped")
            if payout.status == "BROADCAST":
                transition(payout, "SIGNED", reason="fee bumped: replacement at the same nonce, not yet sent")
        log.info(
            "payout %s: fee bumped to %s wei/gas at nonce %s",
            payout.payout_id,
            fees.max_fee_per_gas,
            row.nonce,
        )
        return row


def announce(payout: Payout, fee_asset: str) -> None:
    """payout.completed (COMPLETED, or COMPLETED_SHORT with what was delivered) or payout.failed,
    in the transaction of the final move (the outbox)."""
    emit(
        payout.operator_id,
        PAYOUT_COMPLETED if payout.status in PAID else PAYOUT_FAILED,
        {**entry(payout), "networkFeeMinor": payout.fee_minor, "feeAssetCode": fee_asset},
    )


@dataclasses.dataclass(frozen=True)
class Moved:
    """What a successful payout transaction moved: ``delivered`` to the destination and
    ``debited`` out of the payout wallet (the asset's Transfer logs; the value for ETH)."""

    amount: int
    delivered: int
    debited: int

    @property
    def nothing(self) -> bool:
        """Nothing left the wallet and nothing arrived (a token that returns false): not paid."""
        return self.delivered == 0 and self.debited == 0

    @property
    def short(self) -> bool:
        return self.delivered < self.amount

    def reason(self, asset: Asset | None) -> str:
        code = asset.code if asset else ""
        if self.nothing:
            return (
                f"the transaction succeeded but its {code} Transfer logs move 0 of {self.amount} minor "
                "units to the destination (a token that returns false): nothing was paid; the network "
                "fee was"
            )
        return (
            f"delivered short: the transaction succeeded but its {code} Transfer logs move "
            f"{self.delivered} of {self.amount} minor units to the destination ({self.debited} left "
            "the payout wallet: a token that takes a fee on transfer); the payout is final and is "
            "not paid again"
        )


def _moved(payout: Payout, asset: Asset | None, wallet: str, receipt: Receipt) -> Moved:
    """What the successful transaction moved, read from the receipt's Transfer logs for a token
    (a fee-on-transfer token delivers less than it takes from the sender; one that returns false
    moves nothing)."""
    amount = int(payout.amount_minor)
    if asset is None or asset.kind == "native" or not asset.contract:
        return Moved(amount, amount, amount)
    logs = [
        (sender.lower(), to.lower(), value)
        for contract, sender, to, value in receipt.transfers
        if contract.lower() == asset.contract.lower()
    ]
    wallet, destination = wallet.lower(), str(payout.destination).lower()
    delivered = sum(value for sender, to, value in logs if sender == wallet and to == destination)
    debited = sum(value for sender, to, value in logs if sender == wallet and to != wallet)
    return Moved(amount, delivered, debited)
