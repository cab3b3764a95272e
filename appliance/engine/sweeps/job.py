"""The sweep job of `appliance serve`: confirmed deposits move from the deposit addresses to the
payout wallet (docs/engine-treasury.md, Sweeps).

One row (treasury_run 'sweep') with a single-holder lease: every serving process runs the loop,
the holder of the lease sweeps, every ``sweep_interval_seconds``. A pass, on every chain:

1. Open sweeps advance. Their transactions are nonce reservations of the payouts' kind
   (payouts/transactions.py): signed and stored in the write transaction that reserves the
   nonce, then sent; a crash in between re-sends the stored bytes at the next pass, never a second
   nonce. A payload the market outgrew is replaced at the same nonce under the chain's fee
   ceiling (a native sweep then moves less, so that value and fee still fit the balance). A
   payload that left the canonical chain is sent again.
2. Due addresses (planning.due) are swept: the native asset directly (value = balance − gas ×
   maxFeePerGas); a token after the fee wallet has topped up the address's gas by exactly what
   the transfer needs at the current fee (less what it already holds), once that top-up has the
   native asset's confirmations.

Nothing here touches an operator's ledger: a sweep moves the deployment's money between its own
wallets. Every signature goes through sweeps.signing.sign_sweep_transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from appliance.common import clock, faults
from appliance.common.compiled import insert_if_new
from appliance.common.db import locked, write_transaction
from appliance.common.holders import instance_holder
from appliance.common.jobs import held_by_another
from appliance.engine.chain.base import (
    Chain,
    ChainError,
    EstimateReverted,
    FeeQuote,
    Receipt,
    TransactionRejected,
)
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import Broadcast, DepositAddress, SignedPayload, Sweep, TreasuryRun
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, state, topups, transactions
from appliance.engine.outgoing.fencing import Fenced, Fencing, restored_heights
from appliance.engine.sweeps import planning
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
        self._told: set[str] = set()  # waits already logged (once each, not every pass)
        self._heads: dict[str, int] = {}  # each chain's head, read once per pass

    # -- the job -----------------------------------------------------------------------------------

    def run_pass(self) -> int:
        """One pass when the lease is ours. Returns 0 so that the worker waits its interval."""
        if not DepositAddress.select().exists():
            return 0  # nothing can be due: no write at all (the lease is a write)
        if self._take_lease():
            self.sweep_pass()
        return 0

    def _take_lease(self) -> bool:
        moment = clock.now()
        mine = TreasuryRun.get_or_none((TreasuryRun.name == RUN) & (TreasuryRun.holder == self.holder))
        if mine is not None and mine.lease_until is not None and mine.lease_until > moment + self.lease / 2:
            return True  # held, and long enough still: renewed later, not at every pass
        with write_transaction(database):
            row = locked(TreasuryRun.select().where(TreasuryRun.name == RUN)).first()
            if row is None:
                return insert_if_new(
                    TreasuryRun(
                        name=RUN,
                        holder=self.holder,
                        lease_until=moment + self.lease,
                        checked_at=None,
                        next_run_at=None,
                        last_error=None,
                    )
                )
            if held_by_another(row.holder, row.lease_until, moment, self.holder):
                return False
            TreasuryRun.update(holder=self.holder, lease_until=moment + self.lease, checked_at=moment).where(
                TreasuryRun.name == RUN
            ).execute()
        return True

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
        *,
        to: str,
        value: int,
        data: bytes,
        gas: int,
        fees: FeeQuote,
        amount: int,
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
        try:
            with write_transaction(database):
                nonce = transactions.reserve(asset.chain_id, address, chain_nonce, head)
                broadcast = transactions.sign_and_store(
                    self.custody,
                    (int(deposit.custody_account), int(deposit.derivation_index)),
                    chain_id=asset.chain_id,
                    network_id=asset.network_id,
                    nonce=nonce,
                    to=to,
                    value=value,
                    data=data,
                    gas=gas,
                    fees=fees,
                    purpose=SWEEP,
                    payout_id=None,
                    signed_block=head,
                    sign=self._signer(SWEEP, deposit),
                )
                fields = {
                    "status": "signed",
                    "broadcast": broadcast.id,
                    "amount_minor": str(amount),
                    "tx_hash": broadcast.tx_hash,
                    "planned_at": planned_at,
                    "reason": None,
                    "updated_at": moment,
                }
                if sweep is None:
                    sweep = Sweep.create(
                        chain_id=asset.chain_id,
                        asset_code=asset.code,
                        deposit_address=deposit.id,
                        address=address,
                        created_at=moment,
                        **fields,
                    )
                else:
                    changed = (
                        Sweep.update(**fields)
                        .where((Sweep.id == sweep.id) & (Sweep.status == "topping_up"))
                        .execute()
                    )
                    if not changed:
                        raise _Stale()
        except transactions.NonceAhead as exc:
            self._once(f"ahead:{asset.chain_id}:{address}", "sweeps: %s waits: %s", address, exc)
            return 0
        except _Stale:
            return 0
        log.info("sweep of %s %s from %s signed at nonce %s", amount, asset.code, address, nonce)
        self._send(chain, broadcast, sweep.id)
        return 1

    # -- planning: what is due, and the first transaction of each sweep ----------------------------

    def _plan(self, chain_id: str, chain: Chain) -> int:
        native = self.chains.native_or_none(chain_id)
        dues = planning.due(chain_id, native.code if native else None, self.batch)
        if not dues:
            return 0
        fees = self._capped(chain_id, chain.fee_quote())
        if fees is None:
            self._once(f"ceiling:{chain_id}", "sweeps on %s wait: the fee is above max_fee_per_gas", chain_id)
            return 0
        self._told.discard(f"ceiling:{chain_id}")
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

    def _record(
        self, asset: Asset, deposit: DepositAddress, status: str, amount: int, reason: str, at: object
    ) -> int:
        moment = clock.now()
        with write_transaction(database):
            Sweep.create(
                chain_id=asset.chain_id,
                asset_code=asset.code,
                deposit_address=deposit.id,
                address=deposit.address,
                status=status,
                amount_minor=str(amount),
                reason=reason[:REASON_LENGTH],
                planned_at=at,
                created_at=moment,
                updated_at=moment,
            )
        return 1

    def _start_native(self, chain: Chain, asset: Asset, deposit: DepositAddress, fees: FeeQuote) -> int:
        assert self.custody is not None
        planned_at = clock.now()  # before the balance is read: every deposit confirmed before is in it
        balance = chain.balance(deposit.address)
        gas = planning.NATIVE_GAS
        value = balance - gas * fees.max_fee_per_gas
        least = planning.minimum(asset, fees)
        if balance <= least or value <= 0:
            return self._record(
                asset,
                deposit,
                "skipped",
                balance,
                f"holds {balance}, not above the minimum of {least} "
                "(sweep_min_minor, or the sweep's own fee)",
                planned_at,
            )
        return self._sign_sweep(
            chain,
            asset,
            deposit,
            to=self.custody.payout_address,
            value=value,
            data=b"",
            gas=gas,
            fees=fees,
            amount=value,
            planned_at=planned_at,
        )

    def _token_call(
        self, chain: Chain, asset: Asset, deposit: DepositAddress
    ) -> tuple[int, bytes, int] | str:
        """(token balance, transfer data, gas) of sweeping the address's whole token balance, or
        why it cannot be swept (the transfer would revert)."""
        assert self.custody is not None
        held = chain.balance(deposit.address, asset.contract)
        data = transactions.erc20_transfer_data(self.custody.payout_address, held)
        try:
            gas = fee_rules.with_margin(chain.estimate_gas(deposit.address, asset.contract or "", 0, data))
        except EstimateReverted as exc:
            return f"the transfer would revert on chain ({exc.reason[:300]}); nothing was signed"
        return held, data, gas

    def _start_token(self, chain: Chain, asset: Asset, deposit: DepositAddress, fees: FeeQuote) -> int:
        assert self.custody is not None
        planned_at = clock.now()
        least = planning.minimum(asset, fees)
        held = chain.balance(deposit.address, asset.contract)
        if held <= least:
            reason = f"holds {held}, not above the minimum of {least} (sweep_min_minor)"
            return self._record(asset, deposit, "skipped", held, reason, planned_at)
        call = self._token_call(chain, asset, deposit)
        if isinstance(call, str):
            return self._record(asset, deposit, "failed", held, call, planned_at)
        held, data, gas = call
        needed = gas * fees.max_fee_per_gas
        has = chain.balance(deposit.address)
        if has >= needed:  # the address holds the gas already (a native deposit, an earlier top-up)
            return self._sign_sweep(
                chain,
                asset,
                deposit,
                to=asset.contract or "",
                value=0,
                data=data,
                gas=gas,
                fees=fees,
                amount=held,
                planned_at=planned_at,
            )
        return self._start_topup(chain, asset, deposit, fees, needed - has, held, planned_at)

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
                broadcast = topups.sign(
                    self.custody,
                    native,
                    to=deposit.address,
                    amount=amount,
                    fees=fees,
                    chain_nonce=chain_nonce,
                    head=head,
                    purpose=TOPUP,
                    signer=self._signer(TOPUP, deposit),
                )
                sweep = Sweep.create(
                    chain_id=asset.chain_id,
                    asset_code=asset.code,
                    deposit_address=deposit.id,
                    address=deposit.address,
                    status="topping_up",
                    amount_minor=str(held),
                    topup_minor=str(amount),
                    topup=broadcast.id,
                    planned_at=planned_at,
                    created_at=moment,
                    updated_at=moment,
                )
        except transactions.NonceAhead as exc:
            self._once(f"ahead:{asset.chain_id}:{fee_wallet}", "sweeps: the fee wallet waits: %s", exc)
            return 0
        log.info("fee wallet tops up %s with %s wei for its %s sweep", deposit.address, amount, asset.code)
        self._send(chain, broadcast, None)
        return 1 if sweep else 0

    # -- open sweeps -----------------------------------------------------------------------------------

    def _advance(self, chain_id: str, chain: Chain) -> int:
        moved = self._orphans(chain_id, chain)
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
                moved += self._advance_sweep(chain, asset, deposit, sweep)
        return moved

    def _orphans(self, chain_id: str, chain: Chain) -> int:
        """Top-ups of deposit addresses that no sweep row follows: signed by another copy of the
        data directory and adopted by the nonce fencing (found mined). They are followed to their
        confirmations and made final, so that nothing waits for them for ever."""
        followed = Sweep.select(Sweep.topup).where(Sweep.topup.is_null(False))
        rows = list(
            Broadcast.select().where(
                (Broadcast.chain_id == chain_id)
                & (Broadcast.purpose == TOPUP)
                & Broadcast.status.in_(state.UNFINISHED)
                & Broadcast.id.not_in(followed)
            )
        )
        native = self.chains.native_or_none(chain_id)
        moved = 0
        for row in rows:
            receipt = transactions.mined_payload(chain, row)
            depth = follow.depth(self._head(chain), receipt) if receipt is not None else 0
            if receipt is not None and depth >= (native.confirmations if native else 1):
                with write_transaction(database):
                    follow.finalise(row, receipt)
                moved += 1
        return moved

    def _advance_topup(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int:
        topup = Broadcast.get_by_id(sweep.topup_id)
        if topup.status != "final":
            receipt = self._follow(
                chain, topup, TOPUP, deposit, self.chains.native(asset.chain_id).confirmations
            )
            if receipt is None:
                return 0
            with write_transaction(database):
                follow.finalise(topup, receipt)
            if not receipt.success:  # a plain transfer does not revert; counted all the same
                with write_transaction(database):
                    self._close(sweep, "failed", reason=f"the gas top-up {receipt.tx_hash} reverted")
                return 1
        # The top-up is final: sign the token's transfer from what the address now holds.
        planned_at = clock.now()
        call = self._token_call(chain, asset, deposit)
        if isinstance(call, str):
            with write_transaction(database):
                self._close(sweep, "failed", reason=call)
            return 1
        held, data, gas = call
        if held <= 0:
            with write_transaction(database):
                self._close(sweep, "failed", reason="the address holds none of the token any more")
            return 1
        has = chain.balance(deposit.address)
        fees = self._capped(asset.chain_id, chain.fee_quote())
        if fees is not None:
            # The fee may have risen since the top-up: offer what the address holds, if the block takes it.
            fees = fee_rules.within(fees, gas, has)
        if fees is None:
            self._once(f"gas:{sweep.id}", "sweep of %s waits for the fee to fall", deposit.address)
            return 0
        return self._sign_sweep(
            chain,
            asset,
            deposit,
            to=asset.contract or "",
            value=0,
            data=data,
            gas=gas,
            fees=fees,
            amount=held,
            planned_at=planned_at,
            sweep=sweep,
        )

    def _advance_sweep(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int:
        broadcast = Broadcast.get_by_id(sweep.broadcast_id)
        receipt = self._follow(chain, broadcast, SWEEP, deposit, asset.confirmations, sweep)
        if receipt is None:
            return 0
        landed = SignedPayload.get(
            (SignedPayload.broadcast == broadcast.id) & (SignedPayload.tx_hash == receipt.tx_hash)
        )
        _, value, data = transactions.decode_raw(landed.raw)
        amount = int.from_bytes(data[36:68], "big") if data else value
        fee = receipt.gas_used * receipt.effective_gas_price
        with write_transaction(database):
            follow.finalise(broadcast, receipt)
            self._close(
                sweep,
                "completed" if receipt.success else "failed",
                amount=amount if receipt.success else 0,
                fee=fee,
                tx_hash=receipt.tx_hash,
                reason=None if receipt.success else "the sweep reverted on chain; its network fee was paid",
            )
        log.info("sweep of %s %s from %s completed: %s", amount, asset.code, deposit.address, receipt.tx_hash)
        return 1

    def _close(
        self,
        sweep: Sweep,
        status: str,
        *,
        amount: int | None = None,
        fee: int | None = None,
        tx_hash: str | None = None,
        reason: str | None = None,
    ) -> None:
        """The sweep's final move (inside the caller's write transaction)."""
        fields: dict[str, object] = {"status": status, "reason": reason, "updated_at": clock.now()}
        if amount is not None:
            fields["amount_minor"] = str(amount)
        if fee is not None:
            fields["fee_minor"] = str(fee)
        if tx_hash is not None:
            fields["tx_hash"] = tx_hash
        Sweep.update(**fields).where((Sweep.id == sweep.id) & (Sweep.status == sweep.status)).execute()

    def _follow(
        self,
        chain: Chain,
        row: Broadcast,
        kind: str,
        deposit: DepositAddress,
        confirmations: int,
        sweep: Sweep | None = None,
    ) -> Receipt | None:
        """One look at a reservation in flight (follow.follow): its receipt once it has
        ``confirmations``, else None."""
        return follow.follow(
            chain,
            row,
            confirmations,
            lambda: self._head(chain),
            lambda row, market: self._bump(chain, row, kind, deposit, market, sweep),
            self._refused,
            self._sweep_sent(sweep.id if sweep is not None else None),
        )

    def _bump(
        self,
        chain: Chain,
        row: Broadcast,
        kind: str,
        deposit: DepositAddress,
        market: FeeQuote,
        sweep: Sweep | None,
    ) -> Broadcast | None:
        """Replace the payload at the same nonce under the fee ceiling, stored before it is sent."""
        assert self.custody is not None
        fees = fee_rules.bumped_fees(row, market, self.ceilings.get(row.chain_id))
        if fees is None:
            self._once(
                f"bump:{row.id}",
                "sweeps: %s is below the market; a replacement would exceed max_fee_per_gas",
                row.tx_hash,
            )
            return None
        _, value, data = transactions.decode_call(row)
        extra = int(row.gas_limit) * (fees.max_fee_per_gas - int(row.max_fee_per_gas))
        if kind == SWEEP and not data:
            value -= extra  # value and fee must still fit the balance
            if value <= 0:
                return None
        elif kind == SWEEP and chain.balance(deposit.address) < int(row.gas_limit) * fees.max_fee_per_gas:
            self._once(
                f"bump:{row.id}",
                "sweeps: the token sweep %s cannot be replaced: the address lacks the gas of a higher fee",
                row.tx_hash,
            )
            return None
        with write_transaction(database):
            topups.replace(self.custody, self.chains, row, fees, value, self._signer(kind, deposit))
            if sweep is not None:
                fields: dict[str, object] = {
                    "status": "signed",
                    "tx_hash": row.tx_hash,
                    "updated_at": clock.now(),
                }
                if kind == SWEEP and not data:
                    fields["amount_minor"] = str(value)
                Sweep.update(**fields).where(Sweep.id == sweep.id).execute()
        log.info("sweeps: %s at nonce %s replaced with %s wei/gas", kind, row.nonce, fees.max_fee_per_gas)
        return row

    @staticmethod
    def _refused(row: Broadcast, exc: TransactionRejected) -> None:
        # A used nonce: mined already (its receipt comes next pass) or taken (the reconcile's
        # unknown_outflow says so); underpriced: replaced next pass. Sent again later.
        log.info("sweeps: %s at nonce %s refused: %s", row.purpose, row.nonce, exc.reason)
        state.touch(row)

    @staticmethod
    def _sweep_sent(sweep_id: int | None) -> Callable[[], None] | None:
        if sweep_id is None:
            return None
        return lambda: (
            Sweep.update(status="sent", updated_at=clock.now())
            .where((Sweep.id == sweep_id) & (Sweep.status == "signed"))
            .execute()
        )

    def _send(self, chain: Chain, row: Broadcast, sweep_id: int | None) -> None:
        try:
            follow.send_and_mark(chain, row, self._sweep_sent(sweep_id))
        except TransactionRejected as exc:
            self._refused(row, exc)


class _Stale(Exception):
    """The sweep moved meanwhile (another holder): roll the reservation back."""
