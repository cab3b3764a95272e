"""The sweep job of `appliance serve`: confirmed deposits move from the deposit addresses to the
payout wallet (docs/engine-treasury.md, Sweeps).

One row (treasury_run 'sweep') with a single-holder lease: every serving process runs the loop,
the holder of the lease sweeps, every ``sweep_interval_seconds``. A pass, on every chain:

1. Open sweeps advance. Their transactions are nonce reservations of the payouts' kind
   (outgoing/transactions.py), followed by the one loop every transaction shares
   (outgoing/follow.py, with sweeps.following's Side): signed and stored in the write transaction
   that reserves the nonce, then sent; a crash in between re-sends the stored bytes at the next
   pass, never a second nonce. A payload the market outgrew is replaced at the same nonce under
   the chain's fee ceiling (a native sweep then moves less, so that value and fee still fit the
   balance). A payload that left the canonical chain is sent again.
2. Due addresses (planning.due) are swept: the native asset directly (value = balance − gas ×
   maxFeePerGas); a token after the fee wallet has topped up the address's gas by exactly what
   the transfer needs at the current fee (less what it already holds), once that top-up has the
   native asset's confirmations.

Nothing here touches an operator's ledger: a sweep moves the deployment's money between its own
wallets. Every signature goes through sweeps.signing.sign_sweep_transaction.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.holders import instance_holder
from appliance.common.lease import SingletonLease
from appliance.engine.chain.base import Chain, ChainError, FeeQuote
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import DepositAddress, Sweep, TreasuryRun
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import topups, transactions
from appliance.engine.outgoing.fencing import Fenced, Fencing, restored_heights
from appliance.engine.sweeps import planning, readiness
from appliance.engine.sweeps.facts import TokenSweepFacts
from appliance.engine.sweeps.following import SweepFollowing
from appliance.engine.sweeps.readiness import Fail, Skip
from appliance.engine.sweeps.signing import SWEEP, TOPUP, sign_sweep_transaction

log = logging.getLogger("appliance.engine.sweeps")

RUN = "sweep"
REASON_LENGTH = 500


class Sweeper:
    def __init__(
        self,
        chains: Chains,
        custody: CustodyKeys | None,
        *,
        fee_ceilings: dict[str, int] | None = None,
        data_dir: Path | None = None,
        batch: int = 500,
        lease: timedelta = timedelta(seconds=60),
    ) -> None:
        self.chains = chains
        self.custody = custody
        self.ceilings = dict(fee_ceilings or {})
        self.fencing = Fencing(chains, restored_heights(data_dir))
        self.batch = batch
        self.lease = lease
        self.holder = instance_holder()
        self.sweep_lease = SingletonLease.of(TreasuryRun, RUN, duration=lease, holder=self.holder)
        self._told: set[str] = set()  # waits already logged (once each, not every pass)
        self._heads: dict[str, int] = {}  # each chain's head, read once per pass
        self._dust_fee: dict[str, int] = {}  # each chain's maxFeePerGas at the last look at dust
        self._dust: dict[str, bool] = {}  # whether skipped dust may wait on the chain
        self.planner = planning.DuePlanner()  # what is due, read incrementally between passes
        self.following = SweepFollowing(
            chains, custody, self.ceilings, self._once, self._head, self._signer, self.fencing
        )

    # -- the job -----------------------------------------------------------------------------------

    def run_pass(self) -> int:
        """One pass when the lease is ours. Returns 0 so that the worker waits its interval."""
        if not DepositAddress.select().exists():
            return 0  # nothing can be due: no write at all (the lease is a write)
        if self._take_lease():
            self.sweep_pass()
        return 0

    def _take_lease(self) -> bool:
        # Renewed at most once per half lease; checked_at says when the holder took or renewed it.
        return self.sweep_lease.hold(
            create={"checked_at": None, "next_run_at": None, "last_error": None},
            checked_at=clock.now(),
        )

    def sweep_pass(self) -> int:
        """Advance open sweeps and start the due ones on every chain; returns how many moved."""
        if self.custody is None or self.custody.verify() is not None:
            return 0  # no key, or not the deployment's: nothing can be signed here
        self.fencing.new_pass()
        self._heads.clear()
        moved = 0
        for chain_id, chain in self.chains.chains.items():
            try:
                moved += self._advance(chain_id, chain)
                moved += self._plan(chain_id, chain)
            except ChainError as exc:
                log.warning("sweeps on %s: %s", chain_id, exc)
            except Exception as exc:  # one chain's failure never stops the others' sweeps
                faults.log_failure(log, exc, f"sweeps on {chain_id}")
        return moved

    def _head(self, chain: Chain) -> int:
        """The chain's head as read at the pass's first need of it: one request per pass, not
        several per sweep. Older by a pass at most: confirmations are then counted a little late,
        and a reservation's recorded head (where the fencing would scan from) is only lower."""
        if chain.chain_id not in self._heads:
            self._heads[chain.chain_id] = chain.head().number
        return self._heads[chain.chain_id]

    def _once(self, key: str, message: str, *args: object) -> None:
        if key not in self._told:
            self._told.add(key)
            log.warning(message, *args)

    # -- signing -------------------------------------------------------------------------------------

    def _signer(self, kind: str, deposit: DepositAddress) -> transactions.Sign:
        custody, chains = self.custody, self.chains
        assert custody is not None
        return lambda tx: sign_sweep_transaction(custody, chains, kind, deposit, tx)

    def _capped(self, chain_id: str, quote: FeeQuote) -> FeeQuote | None:
        return fee_rules.capped_fees(quote, self.ceilings.get(chain_id))

    def _wallet_nonce(self, chain: Chain, chain_id: str, address: str, role: str, what: str) -> int | None:
        try:
            return self.fencing.check(chain, chain_id, address, role)
        except Fenced as exc:
            self._once(f"fenced:{chain_id}:{address}", "sweeps: %s waits: %s", what, exc.reason)
            return None

    def _sign_sweep(
        self,
        chain: Chain,
        asset: Asset,
        deposit: DepositAddress,
        verdict: readiness.Sign,
        planned_at: object,
        sweep: Sweep | None = None,
    ) -> int:
        """Reserve the deposit address's next nonce, sign, store and record the sweep in ONE write
        transaction, then send the stored bytes."""
        assert self.custody is not None
        address = deposit.address
        chain_nonce = self._wallet_nonce(chain, asset.chain_id, address, "deposit", f"the sweep of {address}")
        if chain_nonce is None:
            return 0
        head = self._head(chain)
        moment = clock.now()
        key = (int(deposit.custody_account), int(deposit.derivation_index))
        try:
            with write_transaction(database):
                broadcast = transactions.reserve_and_sign(
                    self.custody, key, verdict.call, (asset.chain_id, asset.network_id), (chain_nonce, head),
                    SWEEP, sign=self._signer(SWEEP, deposit),
                )  # fmt: skip
                fields = {
                    "status": "signed",
                    "broadcast": broadcast.id,
                    "amount_minor": str(verdict.amount),
                    "tx_hash": broadcast.tx_hash,
                    "planned_at": planned_at,
                    "reason": None,
                    "updated_at": moment,
                }
                if sweep is None:
                    sweep = _new_sweep(asset, deposit, moment, **fields)
                elif (
                    not Sweep.update(**fields)
                    .where((Sweep.id == sweep.id) & (Sweep.status == "topping_up"))
                    .execute()
                ):
                    raise _Stale()
        except transactions.NonceAhead as exc:
            self._once(f"ahead:{asset.chain_id}:{address}", "sweeps: %s waits: %s", address, exc)
            return 0
        except _Stale:
            return 0
        log.info(
            "sweep of %s %s from %s signed at nonce %s", verdict.amount, asset.code, address, broadcast.nonce
        )
        self.following.follow(chain, broadcast, SWEEP, deposit, asset.confirmations, sweep)  # sent
        return 1

    # -- planning: what is due, and the first transaction of each sweep ----------------------------

    def _plan(self, chain_id: str, chain: Chain) -> int:
        native = self.chains.native_or_none(chain_id)
        dues = self.planner.due(chain_id, native.code if native else None, self.batch)
        dust = native is not None and native.sweep_min_minor is None and self._has_dust(chain_id)
        if not dues and not dust:
            return 0
        fees = self._capped(chain_id, chain.fee_quote())
        if fees is None:
            self._once(f"ceiling:{chain_id}", readiness.WaitKind.ABOVE_CEILING.text, chain_id)
            return 0
        self._told.discard(f"ceiling:{chain_id}")
        if dust and native is not None:
            dues += self._dust_again(chain_id, native, fees, {d.deposit_address_id for d in dues})
        if not dues:
            return 0
        moved = 0
        for item in dues:
            asset = self.chains.find(chain_id, item.asset_code)
            deposit = DepositAddress.get_or_none(DepositAddress.id == item.deposit_address_id)
            if asset is None or deposit is None:
                continue
            if asset.kind == "native":
                moved += self._start_native(chain, asset, deposit, fees)
            else:
                moved += self._start_token(chain, asset, deposit, fees)
        return moved

    def _dust_again(
        self, chain_id: str, native: Asset, fees: FeeQuote, exclude: set[int]
    ) -> list[planning.Due]:
        """Native balances skipped as worth less than their sweep's fee (the default minimum) are
        looked at again whenever the fee has fallen below what it was at the last look (and once
        after a start): what a high fee made dust may be worth sweeping now. Nothing is read
        while the fee stays where it was or rises."""
        last = self._dust_fee.get(chain_id)
        self._dust_fee[chain_id] = fees.max_fee_per_gas
        if last is not None and fees.max_fee_per_gas >= last:
            return []
        again = planning.skipped(chain_id, native.code, planning.minimum(native, fees), exclude, self.batch)
        return again

    def _has_dust(self, chain_id: str) -> bool:
        """Whether skipped native dust may wait on the chain: read once after a start, then kept
        (a skip sets it): a deployment that never skipped reads no fee for it on idle passes."""
        if chain_id not in self._dust:
            self._dust[chain_id] = (
                Sweep.select().where((Sweep.chain_id == chain_id) & (Sweep.status == "skipped")).exists()
            )
        return self._dust[chain_id]

    def _record(
        self, asset: Asset, deposit: DepositAddress, status: str, verdict: Skip | Fail, at: object
    ) -> int:
        moment = clock.now()
        if status == "skipped":
            self._dust[asset.chain_id] = True
        with write_transaction(database):
            _new_sweep(
                asset, deposit, moment, status=status, amount_minor=str(verdict.held),
                reason=verdict.reason[:REASON_LENGTH], planned_at=at, updated_at=moment,
            )  # fmt: skip
        return 1

    def _start_native(self, chain: Chain, asset: Asset, deposit: DepositAddress, fees: FeeQuote) -> int:
        assert self.custody is not None
        planned_at = clock.now()  # before the balance is read: every deposit confirmed before is in it
        balance = chain.balance(deposit.address)
        verdict = readiness.decide_native(
            balance, planning.minimum(asset, fees), fees, self.custody.payout_address
        )
        if isinstance(verdict, Skip):
            # Looked at again once the fee falls below the one that made it dust.
            self._dust_fee[asset.chain_id] = fees.max_fee_per_gas
            return self._record(asset, deposit, "skipped", verdict, planned_at)
        return self._sign_sweep(chain, asset, deposit, verdict, planned_at)

    def _facts(self, chain: Chain, asset: Asset, deposit: DepositAddress) -> TokenSweepFacts:
        assert self.custody is not None
        ceiling = self.ceilings.get(asset.chain_id)
        return TokenSweepFacts(chain, asset, deposit, self.custody.payout_address, ceiling)

    def _start_token(self, chain: Chain, asset: Asset, deposit: DepositAddress, fees: FeeQuote) -> int:
        planned_at = clock.now()
        facts = self._facts(chain, asset, deposit)
        verdict = readiness.decide_token(facts, planning.minimum(asset, fees), fees, asset.contract or "")
        if isinstance(verdict, Skip):
            return self._record(asset, deposit, "skipped", verdict, planned_at)
        if isinstance(verdict, Fail):
            return self._record(asset, deposit, "failed", verdict, planned_at)
        if isinstance(verdict, readiness.Sign):
            return self._sign_sweep(chain, asset, deposit, verdict, planned_at)
        return self._start_topup(chain, asset, deposit, fees, verdict.amount, verdict.moves, planned_at)

    def _start_topup(
        self,
        chain: Chain,
        asset: Asset,
        deposit: DepositAddress,
        fees: FeeQuote,
        amount: int,
        held: int,
        planned_at: object,
    ) -> int:
        """The fee wallet sends the address exactly the gas its token transfer lacks: reserved,
        signed, stored with the sweep's row in one transaction, then sent."""
        assert self.custody is not None
        native = self.chains.native(asset.chain_id)
        fee_wallet = self.custody.fee_address
        needed = topups.needed(amount, fees)
        if chain.balance(fee_wallet) < needed:
            self._once(
                f"unfunded:{asset.chain_id}",
                "sweeps on %s wait: the fee wallet %s holds less than the %s wei a gas top-up needs",
                asset.chain_id,
                fee_wallet,
                needed,
            )
            return 0
        self._told.discard(f"unfunded:{asset.chain_id}")
        chain_nonce = self._wallet_nonce(chain, asset.chain_id, fee_wallet, "fee", "a sweep's gas top-up")
        if chain_nonce is None:
            return 0
        head = self._head(chain)
        moment = clock.now()
        try:
            with write_transaction(database):
                signer = self._signer(TOPUP, deposit)
                top_up = (deposit.address, amount, fees)
                broadcast = topups.sign(self.custody, native, top_up, (chain_nonce, head), TOPUP, signer)
                sweep = _new_sweep(
                    asset, deposit, moment, status="topping_up", amount_minor=str(held),
                    topup_minor=str(amount), topup=broadcast.id, planned_at=planned_at, updated_at=moment,
                )  # fmt: skip
        except transactions.NonceAhead as exc:
            self._once(f"ahead:{asset.chain_id}:{fee_wallet}", "sweeps: the fee wallet waits: %s", exc)
            return 0
        log.info("fee wallet tops up %s with %s wei for its %s sweep", deposit.address, amount, asset.code)
        self.following.follow(chain, broadcast, TOPUP, deposit, native.confirmations, sweep)  # sent
        return 1

    # -- open sweeps -----------------------------------------------------------------------------------

    def _advance(self, chain_id: str, chain: Chain) -> int:
        moved = self.following.orphans(chain_id, chain)
        rows = list(
            Sweep.select()
            .where((Sweep.chain_id == chain_id) & Sweep.status.in_(planning.OPEN))
            .order_by(Sweep.id)
        )
        for sweep in rows:
            deposit = DepositAddress.get_by_id(sweep.deposit_address_id)
            asset = self.chains.find(chain_id, sweep.asset_code)
            if asset is None:
                continue
            if sweep.status == "topping_up":
                moved += self._advance_topup(chain, asset, deposit, sweep)
            else:
                moved += self.following.advance_sweep(chain, asset, deposit, sweep)
        return moved

    def _advance_topup(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int:
        if (moved := self.following.advance_topup(chain, asset, deposit, sweep)) is not None:
            return moved
        # The top-up is final: sign the token's transfer from what the address now holds.
        planned_at = clock.now()
        verdict = readiness.decide_after_topup(self._facts(chain, asset, deposit), asset.contract or "")
        if isinstance(verdict, Fail):
            with write_transaction(database):
                self.following.close(sweep, "failed", reason=verdict.reason)
            return 1
        if isinstance(verdict, readiness.Wait):
            self._once(f"gas:{sweep.id}", verdict.kind.text, deposit.address)
            return 0
        return self._sign_sweep(chain, asset, deposit, verdict, planned_at, sweep)


def _new_sweep(asset: Asset, deposit: DepositAddress, moment: object, **fields: object) -> Sweep:
    """A sweep's row (inside the caller's write transaction)."""
    return Sweep.create(
        chain_id=asset.chain_id,
        asset_code=asset.code,
        deposit_address=deposit.id,
        address=deposit.address,
        created_at=moment,
        **fields,
    )


class _Stale(Exception):
    """The sweep moved meanwhile (another holder): roll the reservation back."""
