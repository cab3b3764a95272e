"""The payout pipeline: REQUESTED → SIGNED → BROADCAST → COMPLETED (or FAILED with a reason).

A worker inside `appliance serve` claims due payouts with a lease (appliance.common.jobs) across
every operator and advances each one step:

- REQUESTED: a pure readiness decision (payouts.readiness) over facts read as it asks for them
  (payouts.facts): custody, the operator's controls, the fencing, the fee ceiling, the payout
  wallet's balance of the asset and its gas. When something is missing the payout waits with a
  reason on its detail (no status move) and is looked at again later, never holding a nonce, so it
  never blocks the payouts behind it. When the payout wallet lacks gas, the fee wallet tops it up
  (outgoing.topups). Otherwise ONE write transaction reserves (wallet, nonce), checks again under
  the wallet's lock, signs, stores the raw bytes and their digest, and moves the payout to SIGNED.
- SIGNED and BROADCAST: payouts.following, on the reservation's lifecycle (appliance.engine.outgoing).

Every move is a compare-and-set (payouts.state.transition), so two workers with stale copies
cannot both make it; the chain is only ever given bytes that are already stored.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.jobs import LeasedQueue
from appliance.engine.chain.base import Chain, ChainError
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import PAYOUT_WALLET, CustodyError, CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import controls
from appliance.engine.models import Broadcast, Payout
from appliance.engine.outgoing import state, topups, transactions
from appliance.engine.outgoing.fencing import Fencing, restored_heights
from appliance.engine.payouts import readiness
from appliance.engine.payouts.facts import Holdings, PayoutFacts, custody_missing, fencing_stop
from appliance.engine.payouts.following import Outcome, PayoutFollowing, announce, wait_on
from appliance.engine.payouts.instructions import instruction_for
from appliance.engine.payouts.readiness import REASON_LENGTH, Adopted, Fail, Sign, TopUp, Wait, WaitKind, wait
from appliance.engine.payouts.state import StaleMove, transition

log = logging.getLogger("appliance.engine.payouts")

OPEN = ("REQUESTED", "SIGNED", "BROADCAST")


class _FundsMoved(Exception):
    """Under the wallet's lock the funds no longer cover the payout (rolls the reservation back)."""


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
        self.following = PayoutFollowing(chains, custody, self.fencing, self.ceilings, poll)
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
        return custody_missing(self.custody)

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
        return self.following.advance(payout, Broadcast.get(Broadcast.payout == payout.id))

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

    def prepare(self, payout: Payout) -> Outcome:
        """REQUESTED: the readiness decision (payouts.readiness) on facts read as it asks for them."""
        facts = PayoutFacts(payout, self.chains, self.custody, self.fencing, self.ceilings)
        verdict = readiness.decide(payout, facts)
        payout = facts.payout  # read again once the fencing has looked
        if isinstance(verdict, Wait):
            return wait_on(payout, verdict)
        if isinstance(verdict, Adopted):  # found on chain and adopted by the fencing
            return Outcome()
        if isinstance(verdict, Fail):
            return self._cannot_succeed(payout, verdict.reason)
        assert facts.chain is not None
        if isinstance(verdict, TopUp):
            return self._top_up(payout, facts.chain, facts.native, verdict)
        return self._sign(payout, facts, verdict)

    def _sign(self, payout: Payout, facts: PayoutFacts, verdict: Sign) -> Outcome:
        """ONE write transaction reserves (wallet, nonce), checks again under the wallet's lock,
        signs, stores the raw bytes and their digest, and moves the payout to SIGNED."""
        asset, chain, custody = facts.asset, facts.chain, self.custody
        assert asset is not None and chain is not None and custody is not None

        def check() -> None:
            # The operator's controls and ledger, after the wallet's lock (the order every
            # reservation takes) and under the operator's balance row's lock (item 31.4).
            native = asset.kind == "native"
            hold = controls.hold_reason(
                payout, native_code=facts.native.code, native=native, fee_cost=verdict.gas_cost
            )
            if hold is not None:
                raise _FundsMoved(hold)
            # Checked again under the wallet's lock (FOR UPDATE on PostgreSQL): another node
            # may have signed from the same balance since the look above (issue 29, item 2).
            short = self._short_of_funds(chain, asset, facts.wallet, int(payout.amount_minor), verdict)
            if short is not None:
                raise _FundsMoved(short)

        known = (facts.chain_nonce, facts.head)
        try:
            with write_transaction(database):
                broadcast = transactions.reserve_and_sign(
                    custody, PAYOUT_WALLET, verdict.call, (asset.chain_id, asset.network_id), known,
                    "payout", payout.id, check=check, instruction=instruction_for(payout),
                )  # fmt: skip
                transition(
                    payout, "SIGNED", signed_payload_digest=broadcast.digest, tx_hash=broadcast.tx_hash
                )
        except transactions.NonceAhead as exc:  # the chain moved since the fencing looked: look again
            return wait_on(payout, readiness.stopped(WaitKind.NONCE_AHEAD, "payout", asset, str(exc)))
        except CustodyError as exc:  # the signer refused it or does not answer: rolled back, no nonce
            return wait_on(payout, wait(WaitKind.NOT_SIGNED, reason=str(exc)))
        except _FundsMoved as exc:  # rolled back: no nonce taken
            return wait_on(payout, wait(WaitKind.UNDER_LOCK, reason=str(exc)))
        return Outcome()

    def _short_of_funds(
        self, chain: Chain, asset: Asset, wallet: str, amount: int, verdict: Sign
    ) -> str | None:
        """Why the wallet cannot pay this now, counting every payload signed and unfinished; None
        when it can."""
        holdings = Holdings(chain, wallet)
        if asset.kind != "native" and (held := holdings.token(asset.contract)) < amount:
            return readiness.unfunded("payout wallet", wallet, asset, amount, held).reason
        needed = verdict.call.value + verdict.gas_cost
        if (native_held := holdings.native()) < needed:
            native = self.chains.native(asset.chain_id)
            return readiness.unfunded("payout wallet", wallet, native, needed, native_held).reason
        return None

    def _cannot_succeed(self, payout: Payout, reason: str) -> Outcome:
        """The transfer reverts as it stands (a token refusing it, a blacklisted destination):
        FAILED with the chain's words, nothing signed and nothing paid, instead of retried for ever."""
        with write_transaction(database):
            transition(payout, "FAILED", reason=reason)
            announce(payout, self.chains.native(payout.chain_id).code)
        log.warning("payout %s cannot succeed: %s", payout.payout_id, reason)
        return Outcome()

    def _top_up(self, payout: Payout, chain: Chain, native: Asset, verdict: TopUp) -> Outcome:
        """The payout wallet lacks gas: the fee wallet tops it up (one top-up at a time per chain)."""
        custody = self.custody
        assert custody is not None
        if topups.payout_topup_pending(native.chain_id):
            return wait_on(payout, wait(WaitKind.TOPUP_PENDING))
        fee_wallet = custody.fee_address
        needed = topups.needed(verdict.amount, verdict.fees)
        held = chain.balance(fee_wallet)
        if held < needed:
            return wait_on(payout, readiness.unfunded("fee wallet", fee_wallet, native, needed, held))
        head = chain.head().number
        chain_nonce, stop = fencing_stop(self.fencing, chain, native.chain_id, fee_wallet, "fee")
        if stop is not None:
            return wait_on(payout, readiness.stopped(stop.kind, "fee", native, stop.reason))
        try:
            with write_transaction(database):
                top_up = (custody.payout_address, verdict.amount, verdict.fees)
                topups.sign(custody, native, top_up, (chain_nonce, head), topups.PAYOUT_TOPUP)
        except CustodyError as exc:  # refused (above signer_gas_cap_wei) or no signer: rolled back
            return wait_on(payout, wait(WaitKind.TOPUP_NOT_SIGNED, reason=str(exc)))
        log.info(
            "fee wallet tops up the payout wallet's gas on %s with %s wei", native.chain_id, verdict.amount
        )
        return wait_on(payout, wait(WaitKind.TOPUP_SIGNED))


def fee_ceilings(settings: Any) -> dict[str, int]:
    """Each configured chain's max_fee_per_gas (wei), for Pipeline(fee_ceilings=...)."""
    return {c.id: int(c.max_fee_per_gas) for c in settings.chains if c.max_fee_per_gas}
