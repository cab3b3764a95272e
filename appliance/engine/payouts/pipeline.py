"""The payout pipeline: REQUESTED → SIGNED → BROADCAST → COMPLETED (or FAILED with a reason).

A worker inside `appliance serve` claims due payouts with a lease (appliance.common.jobs) across
every operator and advances each one step:

- REQUESTED: check custody, the payout wallet's balance of the asset and its gas; when something is
  missing the payout waits with a reason on its detail (no status move) and is looked at again
  later, never holding a nonce, so it never blocks the payouts behind it. When the payout wallet
  lacks gas, the fee wallet tops it up (a transaction of its own, through the same reservations).
  Otherwise ONE write transaction reserves (wallet, nonce), signs, stores the raw bytes and their
  digest, and moves the payout to SIGNED.
- SIGNED: send the stored bytes; every send is an attempt {occurredAt, outcome, txHash}; accepted
  bytes move the payout to BROADCAST.
- BROADCAST: look for a receipt of any payload signed at its nonce. With the asset's confirmations
  it is COMPLETED (or FAILED when it reverted). A transaction that was mined and is no longer in
  the canonical chain (a reorg shallower than the confirmations) goes back to SIGNED and the SAME
  bytes are sent again. A transaction stuck below the market fee is replaced at the same nonce.

Every move is a compare-and-set (payouts.state.transition), so two workers with stale copies
cannot both make it; the chain is only ever given bytes that are already stored.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.jobs import LeasedQueue
from appliance.engine.chain.base import (
    Chain,
    ChainError,
    EstimateReverted,
    FeeQuote,
    Receipt,
    Rejection,
    TransactionRejected,
)
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import PAYOUT_WALLET, CustodyError, CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import book, controls
from appliance.engine.models import Broadcast, Payout, PayoutAttempt, SignedPayload
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, state, topups, transactions
from appliance.engine.outgoing.fencing import Fenced, Fencing, Scanning, fence, restored_heights
from appliance.engine.payouts.service import entry
from appliance.engine.payouts.state import StaleMove, transition
from appliance.engine.webhooks.events import PAYOUT_COMPLETED, PAYOUT_FAILED, emit

log = logging.getLogger("appliance.engine.payouts")

OPEN = ("REQUESTED", "SIGNED", "BROADCAST")
NO_CUSTODY = "waiting for the custody key: run `appliance custody init` and restart"
REASON_LENGTH = 500  # payout.reason's column
# A payout waiting for the fencing's scan of its wallet's history comes back on the next passes:
# each pass reads the next blocks (fencing.SCAN_BLOCKS), so the wait is the scan's pace.
SCANNING_WAIT = timedelta(seconds=1)


class _FundsMoved(Exception):
    """Under the wallet's lock the funds no longer cover the payout (rolls the reservation back)."""


@dataclasses.dataclass
class Outcome:
    """What a step asks of the queue: come back after ``after`` (None: as soon as possible)."""

    after: timedelta | None = None


class Pipeline:
    def __init__(
        self,
        chains: Chains,
        custody: CustodyKeys | None,
        *,
        lease: timedelta = timedelta(seconds=10),
        poll: timedelta = timedelta(seconds=1),
        data_dir: Path | None = None,
        fee_ceilings: dict[str, int] | None = None,
    ) -> None:
        self.chains = chains
        self.custody = custody
        # max_fee_per_gas of each chain's settings (wei): nothing is signed above it.
        self.ceilings = dict(fee_ceilings or {})
        # Chain heights a restored backup recorded: where the fencing scans from (see fencing).
        self.fencing = Fencing(chains, restored_heights(data_dir))
        self.topups = topups.PayoutTopUps(chains, custody, self.fencing, self.ceilings)
        self._noted_once = False
        self.poll = poll
        self.queue = LeasedQueue(
            Payout,
            database,
            pending=self._claimable,
            lease=lease,
            attempts_field="work_attempts",
        )

    # -- the worker ------------------------------------------------------------------------------

    def _claimable(self) -> Any:
        # Without a custody key nothing new can be signed: REQUESTED payouts are not claimed (the
        # pass gives the new ones the reason in one statement, instead of three writes per payout
        # per look); payouts signed before still go out and confirm.
        return Payout.status.in_(OPEN if self._custody_missing() is None else OPEN[1:])

    def _custody_missing(self) -> str | None:
        """Why nothing new can be signed here: no custody key, or a key that is not the
        deployment's (its fingerprint, recorded at first use, differs: custody_record); else None."""
        return NO_CUSTODY if self.custody is None else self.custody.verify()

    def _note_missing_custody(self, reason: str) -> None:
        """Give waiting payouts the reason: on the first pass all of them, then those admitted
        since (never looked at: no next attempt set), found through the (status, next_attempt_at)
        index, so that a pass costs the new payouts, not every payout ever left waiting."""
        moment = clock.now()
        if self._noted_once:
            new = Payout.next_attempt_at.is_null()
        else:
            new = Payout.reason.is_null() | (Payout.reason != reason) | Payout.next_attempt_at.is_null()
        with write_transaction(database):
            waiting = (
                Payout.update(reason=reason, updated_at=moment, next_attempt_at=moment)
                .where((Payout.status == "REQUESTED") & new)
                .execute()
            )
        self._noted_once = True
        if waiting:
            log.info("%d payouts wait: %s", waiting, reason)

    def run_pass(self, limit: int = 50) -> int:
        """Advance gas top-ups and every due payout one step; returns how many payouts moved."""
        self.fencing.new_pass()
        self.topups.advance()
        if (missing := self._custody_missing()) is not None:
            self._note_missing_custody(missing[:REASON_LENGTH])
        moved = 0
        for payout_id in self.queue.claim(limit):
            payout = Payout.get_or_none(Payout.id == payout_id)
            if payout is None or payout.status not in OPEN:
                continue
            before = payout.status
            try:
                outcome = self.step(payout)
            except ChainError as exc:
                self.queue.retry_later(payout_id, f"chain: {exc}")
                self._note_node_down(payout)
                continue
            except (StaleMove, state.StaleBroadcast):
                outcome = Outcome()
            except Exception as exc:
                faults.log_failure(log, exc, f"payout {payout.payout_id} step")
                self.queue.retry_later(payout_id, f"{type(exc).__name__}: {exc}")
                continue
            if payout.reason == self._node_down(payout):  # the node answered again
                Payout.update(reason=None).where(
                    (Payout.id == payout_id) & (Payout.reason == payout.reason)
                ).execute()
            self.queue.release(payout_id, after=outcome.after)
            moved += Payout.get_by_id(payout_id).status != before
        return moved

    def step(self, payout: Payout) -> Outcome:
        if payout.status == "REQUESTED":
            return self.prepare(payout)
        broadcast = Broadcast.get(Broadcast.payout == payout.id)
        if payout.status == "SIGNED":
            return self.send(payout, broadcast)
        return self.confirm(payout, broadcast)

    @staticmethod
    def _node_down(payout: Payout) -> str:
        return f"waiting for chain {payout.chain_id}: its node does not answer; retried by itself"

    def _note_node_down(self, payout: Payout) -> None:
        """The payout's detail says why it waits while its chain's node fails (issue 32): a fixed
        text, as the error itself may carry the RPC URL (a provider's key in its path); the log
        has the error. Written once per outage, not at each retry."""
        reason = self._node_down(payout)
        if payout.reason != reason:
            Payout.update(reason=reason, updated_at=clock.now()).where(
                (Payout.id == payout.id) & (Payout.status == payout.status)
            ).execute()

    # -- REQUESTED: funds, gas, reservation ---------------------------------------------------------

    def _wait(self, payout: Payout, reason: str, after: timedelta | None = None) -> Outcome:
        """Keep waiting in the same status with a reason on the detail (no status move)."""
        reason = reason[:REASON_LENGTH]
        if payout.reason != reason:
            Payout.update(reason=reason, updated_at=clock.now()).where(
                (Payout.id == payout.id) & (Payout.status == payout.status)
            ).execute()
            log.info("payout %s waits: %s", payout.payout_id, reason)
        return Outcome(after or timedelta(seconds=2))

    def _in_flight(self, chain_id: str, wallet: str) -> tuple[dict[str | None, int], int]:
        """Amounts (by asset contract; None = native) and gas budget of the wallet's transactions
        that are signed but not yet final: the chain's balance does not show them yet."""
        values: dict[str | None, int] = {}
        gas = 0
        rows = Broadcast.select().where(
            (Broadcast.chain_id == chain_id)
            & (Broadcast.wallet == wallet)
            & (Broadcast.status.in_(state.IN_FLIGHT))
        )
        for row in rows:
            to, value, data = transactions.decode_call(row)
            gas += int(row.gas_limit) * int(row.max_fee_per_gas)
            if data[:4] == transactions.TRANSFER_SELECTOR:
                values[to] = values.get(to, 0) + int.from_bytes(data[36:68], "big")
            else:
                values[None] = values.get(None, 0) + value
        return values, gas

    def prepare(self, payout: Payout) -> Outcome:
        if (missing := self._custody_missing()) is not None or self.custody is None:
            return self._wait(payout, missing or NO_CUSTODY, timedelta(seconds=5))
        asset = self.chains.find(payout.chain_id, payout.asset)
        chain = self.chains.get(payout.chain_id)
        if asset is None or chain is None:
            return self._wait(
                payout, f"chain {payout.chain_id} is not configured on this deployment", timedelta(seconds=30)
            )
        hold = self._held(payout, asset)
        if hold is not None:  # looked at first (read only), so a held payout costs no chain call
            return self._wait(payout, hold)
        custody = self.custody
        wallet = custody.payout_address
        # Fencing first, before funds: a restored copy finds what another copy already paid (and
        # marks it) even when the wallet is empty now.
        head = chain.head().number
        try:
            chain_nonce = self.fencing.check(chain, asset.chain_id, wallet, "payout")
        except Scanning as exc:  # the next pass reads the next blocks
            return self._wait(payout, _stopped("payout", asset.chain_id, exc.reason), SCANNING_WAIT)
        except Fenced as exc:
            return self._wait(payout, _stopped("payout", asset.chain_id, exc.reason), timedelta(seconds=30))
        payout = Payout.get_by_id(payout.id)
        if payout.status != "REQUESTED":  # found on chain and adopted by the fencing
            return Outcome()
        amount = int(payout.amount_minor)
        fees = self._capped(asset.chain_id, chain.fee_quote())
        if fees is None:
            return self._wait(payout, self._above_ceiling(asset.chain_id, chain), timedelta(seconds=15))
        if asset.kind == "native":
            to, value, data = payout.destination, amount, b""
        else:
            to, value, data = (
                asset.contract or "",
                0,
                transactions.erc20_transfer_data(payout.destination, amount),
            )
        # Gas is estimated once the funds are known to be there (an estimate of a transfer the
        # wallet cannot make reverts).
        in_flight, gas_in_flight = self._in_flight(asset.chain_id, wallet)
        if asset.kind != "native":
            held = chain.balance(wallet, asset.contract) - in_flight.get(asset.contract, 0)
            if held < amount:
                return self._wait(payout, _unfunded("payout wallet", wallet, asset, amount, held))
        native = self.chains.native(asset.chain_id)
        native_held = chain.balance(wallet) - in_flight.get(None, 0) - gas_in_flight
        if native_held < value:
            return self._wait(
                payout,
                _unfunded(
                    "payout wallet",
                    wallet,
                    native,
                    value + fee_rules.NATIVE_GAS * fees.max_fee_per_gas,
                    native_held,
                ),
            )
        try:
            gas = fee_rules.with_margin(chain.estimate_gas(wallet, to, value, data))
        except EstimateReverted as exc:
            return self._cannot_succeed(payout, exc.reason)
        gas_cost = gas * fees.max_fee_per_gas
        if native_held < value + gas_cost:
            return self._top_up(
                payout,
                chain,
                native,
                topups.payout_topup_amount(gas, fees, value + gas_cost - native_held),
                fees,
            )
        try:
            with write_transaction(database):
                nonce = transactions.reserve(asset.chain_id, wallet, chain_nonce, head)
                # The operator's controls and ledger, after the wallet's lock (the order every
                # reservation takes) and under the operator's balance row's lock (item 31.4).
                hold = controls.hold_reason(
                    payout, native_code=native.code, native=asset.kind == "native", fee_cost=gas_cost
                )
                if hold is not None:
                    raise _FundsMoved(hold)
                # Checked again under the wallet's lock (FOR UPDATE on PostgreSQL): another node
                # may have signed from the same balance since the look above (issue 29, item 2).
                short = self._short_of_funds(chain, asset, wallet, amount, value, gas_cost)
                if short is not None:
                    raise _FundsMoved(short)
                broadcast = transactions.sign_and_store(
                    custody,
                    PAYOUT_WALLET,
                    chain_id=asset.chain_id,
                    network_id=asset.network_id,
                    nonce=nonce,
                    to=to,
                    value=value,
                    data=data,
                    gas=gas,
                    fees=fees,
                    purpose="payout",
                    payout_id=payout.id,
                    signed_block=head,
                )
                transition(
                    payout, "SIGNED", signed_payload_digest=broadcast.digest, tx_hash=broadcast.tx_hash
                )
        except transactions.NonceAhead as exc:  # the chain moved since the fencing looked: look again
            return self._wait(payout, _stopped("payout", asset.chain_id, str(exc)))
        except CustodyError as exc:  # the signer refused it or does not answer: rolled back, no nonce
            return self._wait(payout, f"not signed: {exc}"[:REASON_LENGTH], timedelta(seconds=5))
        except _FundsMoved as exc:  # rolled back: no nonce taken
            return self._wait(payout, str(exc))
        return Outcome()

    def _held(self, payout: Payout, asset: Asset) -> str | None:
        """The operator's controls as they stand (a pause, an approval, its 24 h volume, its
        prefunded balance without the fee): checked again, with the fee, when reserving."""
        return controls.hold_reason(
            payout,
            native_code=self.chains.native(asset.chain_id).code,
            native=asset.kind == "native",
            fee_cost=0,
            lock=False,
        )

    def _short_of_funds(
        self, chain: Chain, asset: Asset, wallet: str, amount: int, value: int, gas_cost: int
    ) -> str | None:
        """Why the wallet cannot pay this now, counting every payload signed and unfinished; None
        when it can. The in-flight sum is read before the chain's balance: a payload mined in
        between is then counted twice (a wait), never not at all (an overspend)."""
        in_flight, gas_in_flight = self._in_flight(asset.chain_id, wallet)
        if asset.kind != "native":
            held = chain.balance(wallet, asset.contract) - in_flight.get(asset.contract, 0)
            if held < amount:
                return _unfunded("payout wallet", wallet, asset, amount, held)
        native = self.chains.native(asset.chain_id)
        native_held = chain.balance(wallet) - in_flight.get(None, 0) - gas_in_flight
        if native_held < value + gas_cost:
            return _unfunded("payout wallet", wallet, native, value + gas_cost, native_held)
        return None

    def _capped(self, chain_id: str, quote: FeeQuote) -> FeeQuote | None:
        """The market's fees under the chain's ceiling: None when even the base fee and the tip
        are above it (nothing offered under it could be included now)."""
        return fee_rules.capped_fees(quote, self.ceilings.get(chain_id))

    def _above_ceiling(self, chain_id: str, chain: Chain) -> str:
        return (
            f"the network fee on {chain_id} is above its max_fee_per_gas ({self.ceilings.get(chain_id)} "
            "wei per gas); the payout waits, holding no nonce, until the fee falls under it"
        )

    def _cannot_succeed(self, payout: Payout, reason: str) -> Outcome:
        """The transfer reverts as it stands (a token refusing it, a blacklisted destination):
        FAILED with the chain's words, nothing signed and nothing paid, instead of retried for ever."""
        with write_transaction(database):
            transition(
                payout,
                "FAILED",
                reason=f"the transfer would revert on chain ({reason[:300]}); nothing was signed or paid",
            )
            announce(payout, self.chains.native(payout.chain_id).code)
        log.warning("payout %s cannot succeed: %s", payout.payout_id, reason)
        return Outcome()

    def _top_up(self, payout: Payout, chain: Chain, native: Asset, amount: int, fees: FeeQuote) -> Outcome:
        custody = self.custody
        assert custody is not None
        if topups.payout_topup_pending(native.chain_id):
            return self._wait(payout, "waiting for the fee wallet's gas top-up of the payout wallet")
        fee_wallet = custody.fee_address
        needed = topups.needed(amount, fees)
        held = chain.balance(fee_wallet)
        if held < needed:
            return self._wait(payout, _unfunded("fee wallet", fee_wallet, native, needed, held))
        head = chain.head().number
        try:
            chain_nonce = self.fencing.check(chain, native.chain_id, fee_wallet, "fee")
        except Scanning as exc:
            return self._wait(payout, _stopped("fee", native.chain_id, exc.reason), SCANNING_WAIT)
        except Fenced as exc:
            return self._wait(payout, _stopped("fee", native.chain_id, exc.reason), timedelta(seconds=30))
        try:
            with write_transaction(database):
                topups.sign(
                    custody,
                    native,
                    to=custody.payout_address,
                    amount=amount,
                    fees=fees,
                    chain_nonce=chain_nonce,
                    head=head,
                    purpose=topups.PAYOUT_TOPUP,
                )
        except CustodyError as exc:  # refused (above signer_gas_cap_wei) or no signer: rolled back
            return self._wait(payout, f"gas top-up not signed: {exc}"[:REASON_LENGTH], timedelta(seconds=30))
        log.info("fee wallet tops up the payout wallet's gas on %s with %s wei", native.chain_id, amount)
        return self._wait(payout, "waiting for the fee wallet's gas top-up of the payout wallet")

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
        return self._wait(
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
            self._wait(
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
        shortfall = _shortfall(payout, asset, broadcast.wallet, receipt) if receipt.success else None
        mined = SignedPayload.get_or_none(
            (SignedPayload.broadcast == broadcast.id) & (SignedPayload.tx_hash == receipt.tx_hash)
        )
        if mined is not None and transactions.is_cancel(mined.raw, broadcast.wallet):
            shortfall = (
                f"cancelled by the operator: nonce {broadcast.nonce} was taken by the zero-value "
                f"self-transfer {receipt.tx_hash}; nothing was paid (its network fee was)"
            )
        with write_transaction(database):
            follow.finalise(broadcast, receipt)
            if receipt.success and shortfall is None:
                transition(payout, "COMPLETED", tx_hash=receipt.tx_hash, fee_minor=fee)
            else:
                transition(
                    payout,
                    "FAILED",
                    tx_hash=receipt.tx_hash,
                    fee_minor=fee,
                    reason=shortfall
                    or "the transaction reverted on chain; nothing was paid (the network fee was)",
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
            return self._wait(
                payout,
                f"nonce {nonce} of {wallet} is used on chain and no receipt of this payout's payloads is "
                "found; no block is known to look the transaction up from: an operator must check",
                timedelta(seconds=30),
            )
        tx, head = found.tx, found.head
        if tx is None:
            return self._wait(
                payout,
                f"nonce {nonce} of {wallet} is used on chain but its transaction is not visible yet "
                "(a node behind?); looking again, nothing signed meanwhile",
                timedelta(seconds=5),
            )
        if found.found is follow.Found.OURS:
            if payout.status == "SIGNED":  # it was sent (the answer lost) and is mined
                with write_transaction(database):
                    transition(payout, "BROADCAST", tx_hash=tx.tx_hash)
            return self._wait(payout, f"mined as {tx.tx_hash}; waiting for its receipt", timedelta(seconds=2))
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
        fence(broadcast.chain_id, wallet, reason)
        asset = self.chains.find(payout.chain_id, payout.asset)
        if head - tx.block_number + 1 < (asset.confirmations if asset else 1):
            return self._wait(payout, reason, timedelta(seconds=2))
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
    """payout.completed or payout.failed, in the transaction of the final move (the outbox)."""
    emit(
        payout.operator_id,
        PAYOUT_COMPLETED if payout.status == "COMPLETED" else PAYOUT_FAILED,
        {**entry(payout), "networkFeeMinor": payout.fee_minor, "feeAssetCode": fee_asset},
    )


def _shortfall(payout: Payout, asset: Asset | None, wallet: str, receipt: Receipt) -> str | None:
    """For a token payout, None when the receipt's Transfer logs move the full amount from the
    wallet to the destination; otherwise the reason it is not paid in full (a token that returns
    false instead of reverting moves nothing; a fee-on-transfer token moves less)."""
    if asset is None or asset.kind == "native" or not asset.contract:
        return None
    moved = sum(
        value
        for contract, sender, to, value in receipt.transfers
        if contract.lower() == asset.contract.lower()
        and sender.lower() == wallet.lower()
        and to.lower() == str(payout.destination).lower()
    )
    if moved == int(payout.amount_minor):
        return None
    return (
        f"the transaction succeeded but its {asset.code} Transfer logs move {moved} of "
        f"{payout.amount_minor} minor units to the destination (a token that returns false, or takes "
        "a fee on transfer): not paid in full; the network fee was paid"
    )


def fee_ceilings(settings: Any) -> dict[str, int]:
    """Each configured chain's max_fee_per_gas (wei), for Pipeline(fee_ceilings=...)."""
    return {c.id: int(c.max_fee_per_gas) for c in settings.chains if c.max_fee_per_gas}


def _stopped(role: str, chain_id: str, reason: str) -> str:
    return f"signing for the {role} wallet on {chain_id} is stopped: {reason}"


def _unfunded(role: str, address: str, asset: Asset, needed: int, held: int) -> str:
    return (
        f"{role} {address} is unfunded: needs {needed} minor units of {asset.code} on {asset.chain_id}, "
        f"holds {max(held, 0)} available; the payout waits and proceeds once it is funded"
    )
