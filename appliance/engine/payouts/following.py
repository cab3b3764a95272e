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
from appliance.engine.chain.base import Chain, ChainError, Receipt, Rejection, TransactionRejected
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import PAYOUT_WALLET, CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import book
from appliance.engine.models import Broadcast, Payout, PayoutAttempt, SignedPayload
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, state, transactions
from appliance.engine.outgoing.fencing import Fencing, fence_foreign
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

    # -- SIGNED: send the stored bytes -------------------------------------------------------------

    def _record_attempt(self, payout: Payout, outcome: str, tx_hash: str | None) -> None:
        PayoutAttempt.create(payout=payout.id, outcome=outcome, tx_hash=tx_hash, occurred_at=clock.now())

    def send(self, payout: Payout, broadcast: Broadcast) -> Outcome:
        chain = self._chain(broadcast)
        try:
            tx_hash = follow.send(chain, broadcast)
        except TransactionRejected as exc:
            return self._rejected(payout, broadcast, chain, exc)
        except ChainError as exc:
            with write_transaction(database):
                self._record_attempt(payout, "UNREACHABLE", broadcast.tx_hash)
            raise exc
        with write_transaction(database):
            self._record_attempt(payout, "SENT", tx_hash)
            state.transition(broadcast, "sent")
            transition(payout, "BROADCAST", tx_hash=tx_hash)
        return Outcome(self.poll)

    def _rejected(
        self, payout: Payout, broadcast: Broadcast, chain: Chain, exc: TransactionRejected
    ) -> Outcome:
        if exc.kind is Rejection.NONCE_USED:
            # Something is mined at this nonce: ours (then the receipt is found) or a foreign one.
            if transactions.mined_payload(chain, broadcast) is not None:
                with write_transaction(database):
                    self._record_attempt(payout, "SENT", broadcast.tx_hash)
                    transition(payout, "BROADCAST", tx_hash=broadcast.tx_hash)
                return Outcome()
            with write_transaction(database):
                self._record_attempt(payout, "REJECTED_NONCE_USED", broadcast.tx_hash)
            return self._nonce_used(payout, broadcast, chain)
        if exc.kind is Rejection.UNDERPRICED:
            with write_transaction(database):
                self._record_attempt(payout, "REJECTED_UNDERPRICED", broadcast.tx_hash)
            if self._bump(payout, broadcast, chain) is None:
                return Outcome(timedelta(seconds=15))
            return Outcome()
        outcome = "REJECTED_FUNDS" if exc.kind is Rejection.INSUFFICIENT_FUNDS else "REJECTED"
        with write_transaction(database):
            self._record_attempt(payout, outcome, broadcast.tx_hash)
        return wait_on(
            payout,
            f"the chain refused the signed transaction ({exc.reason[:200]}); sending it again later",
            timedelta(seconds=10),
        )

    def _bump(self, payout: Payout, broadcast: Broadcast, chain: Chain) -> Broadcast | None:
        """Replace the payload in force at the same nonce with higher fees, stored before sending."""
        assert self.custody is not None
        asset = self.chains.native(broadcast.chain_id)
        fees = fee_rules.bumped_fees(broadcast, chain.fee_quote(), self.ceilings.get(broadcast.chain_id))
        if fees is None:  # the replacement would have to offer more than the ceiling
            wait_on(
                payout,
                f"stuck below the market at nonce {broadcast.nonce}; a replacement would exceed "
                f"{broadcast.chain_id}'s max_fee_per_gas ({self.ceilings.get(broadcast.chain_id)} wei per "
                "gas): it waits for the fee to fall (or `appliance payout cancel`)",
            )
            return None
        to, value, data = transactions.decode_call(broadcast)
        with write_transaction(database):
            transactions.replace(
                self.custody, PAYOUT_WALLET, broadcast, asset.network_id, to, value, data, fees
            )
            changed = (
                Payout.update(
                    signed_payload_digest=broadcast.digest, tx_hash=broadcast.tx_hash, updated_at=clock.now()
                )
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
            broadcast.nonce,
        )
        return broadcast

    # -- BROADCAST: receipts, confirmations, reorgs, stuck transactions ------------------------------

    def _chain(self, broadcast: Broadcast) -> Chain:
        chain = self.chains.get(broadcast.chain_id)
        if chain is None:
            raise ChainError(f"chain {broadcast.chain_id} is not configured on this deployment")
        return chain

    def confirm(self, payout: Payout, broadcast: Broadcast) -> Outcome:
        chain = self._chain(broadcast)
        asset = self.chains.find(payout.chain_id, payout.asset)
        confirmations = asset.confirmations if asset else 1
        receipt = transactions.mined_payload(chain, broadcast)
        if receipt is None:
            if broadcast.mined_block is not None:
                if follow.block_still_there(chain, broadcast):
                    # A provider one block behind (or load-balanced over nodes) answers no receipt
                    # for a moment: not a reorg while the block that held it is still canonical.
                    return Outcome(self.poll or timedelta(seconds=1))
                return self._reorged(payout, broadcast)
            return self._pending(payout, broadcast, chain)
        follow.record_mined(broadcast, receipt)
        if follow.depth(chain.head().number, receipt) < confirmations:
            return Outcome(self.poll)
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
        return Outcome()

    def _nonce_used(self, payout: Payout, broadcast: Broadcast, chain: Chain) -> Outcome:
        """The chain says the broadcast's nonce is used and no stored payload's receipt is found.
        Never FAILED while it may have been paid: the transaction at that nonce is looked up on
        chain. Ours (a payload of this reservation, or the same call signed by another copy of the
        data directory) is adopted and confirmed; a foreign one fences the wallet and, once it has
        the asset's confirmations, fails the payout (nothing of it can land); not visible yet (a
        provider behind): look again later."""
        nonce, wallet = int(broadcast.nonce), broadcast.wallet
        found = follow.at_nonce(chain, self.fencing, broadcast)
        if found.found is follow.Found.NO_START:
            return wait_on(
                payout,
                f"nonce {nonce} of {wallet} is used on chain and no receipt of this payout's payloads is "
                "found; no block is known to look the transaction up from: an operator must check",
                timedelta(seconds=30),
            )
        tx, head = found.tx, found.head
        if tx is None:
            return wait_on(
                payout,
                f"nonce {nonce} of {wallet} is used on chain but its transaction is not visible yet "
                "(a node behind?); looking again, nothing signed meanwhile",
                timedelta(seconds=5),
            )
        if found.found is follow.Found.OURS:
            if payout.status == "SIGNED":  # it was sent (the answer lost) and is mined
                with write_transaction(database):
                    transition(payout, "BROADCAST", tx_hash=tx.tx_hash)
            return wait_on(payout, f"mined as {tx.tx_hash}; waiting for its receipt", timedelta(seconds=2))
        if found.found is follow.Found.SAME_CALL:
            with write_transaction(database):
                transactions.adopt(broadcast, tx.raw, tx.tx_hash)
                Payout.update(
                    signed_payload_digest=broadcast.digest, tx_hash=tx.tx_hash, updated_at=clock.now()
                ).where(Payout.id == payout.id).execute()
                if payout.status == "SIGNED":
                    transition(payout, "BROADCAST", tx_hash=tx.tx_hash)
            log.warning(
                "payout %s: found paid on chain by %s (signed elsewhere)", payout.payout_id, tx.tx_hash
            )
            return Outcome()
        reason = follow.foreign_use(broadcast, tx, block=True)
        fence_foreign(broadcast.chain_id, wallet, "payout", tx, reason)
        asset = self.chains.find(payout.chain_id, payout.asset)
        if head - tx.block_number + 1 < (asset.confirmations if asset else 1):
            return wait_on(payout, reason, timedelta(seconds=2))
        with write_transaction(database):
            follow.finalise(broadcast, None)
            transition(
                payout,
                "FAILED",
                reason=f"nonce {nonce} of {wallet} was used by {tx.tx_hash}, a transaction the engine did "
                "not sign; nothing of this payout was paid or can land",
            )
            announce(payout, self.chains.native(payout.chain_id).code)
        return Outcome()

    def _reorged(self, payout: Payout, broadcast: Broadcast) -> Outcome:
        with write_transaction(database):
            follow.reorged(broadcast)
            transition(
                payout,
                "SIGNED",
                reason=f"block {broadcast.mined_block} left the canonical chain (reorg); "
                "re-sending the same signed bytes",
            )
        log.warning(
            "payout %s: its block %s was reorganised away; re-sending",
            payout.payout_id,
            broadcast.mined_block,
        )
        return Outcome()

    def _pending(self, payout: Payout, broadcast: Broadcast, chain: Chain) -> Outcome:
        if fee_rules.outgrown(broadcast, chain.fee_quote()):
            # The base fee has outgrown what the payload may pay: it cannot be included at all.
            if self._bump(payout, broadcast, chain) is None:
                return Outcome(timedelta(seconds=15))  # above the ceiling: look again later
            return Outcome()
        if follow.resend_due(broadcast):
            state.touch(broadcast)
            try:
                follow.send(chain, broadcast)
            except TransactionRejected as exc:
                if exc.kind is Rejection.NONCE_USED:
                    # Used at its nonce and no receipt of ours: never left BROADCAST for ever.
                    return self._nonce_used(payout, broadcast, chain)
                log.info("payout %s re-send refused: %s", payout.payout_id, exc.reason)
        return Outcome(self.poll)


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
