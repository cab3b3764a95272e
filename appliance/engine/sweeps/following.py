"""Open sweeps on their way: the sweep's and its gas top-up's reservations followed on the
lifecycle every transaction of the engine shares (appliance.engine.outgoing.follow), the sweep's
row moving with them in the same transactions."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.base import Chain, FeeQuote, Receipt, TransactionRejected
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import deployment
from appliance.engine.models import Broadcast, DepositAddress, SignedPayload, Sweep
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, state, topups, transactions
from appliance.engine.outgoing.fencing import Fencing
from appliance.engine.sweeps.signing import SWEEP, TOPUP

log = logging.getLogger("appliance.engine.sweeps")


class SweepFollowing:
    def __init__(
        self,
        chains: Chains,
        custody: CustodyKeys | None,
        ceilings: dict[str, int],
        once: Callable[..., None],
        head: Callable[[Chain], int],
        signer: Callable[[str, DepositAddress], transactions.Sign],
        fencing: Fencing | None = None,
    ) -> None:
        self.chains, self.custody, self.ceilings = chains, custody, ceilings
        self._once, self._head, self._signer = once, head, signer
        self.fencing = fencing
        self._looked: dict[int, datetime] = {}  # broadcast id → when its nonce was last looked at

    def advance_sweep(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int:
        broadcast = Broadcast.get_by_id(sweep.broadcast_id)
        receipt = self.follow(chain, broadcast, SWEEP, deposit, asset.confirmations, sweep)
        if receipt is None:
            return self._taken(chain, asset, broadcast, sweep)
        landed = SignedPayload.get(
            (SignedPayload.broadcast == broadcast.id) & (SignedPayload.tx_hash == receipt.tx_hash)
        )
        _, value, data = transactions.decode_raw(landed.raw)
        amount = int.from_bytes(data[36:68], "big") if data else value
        fee = receipt.gas_used * receipt.effective_gas_price
        with write_transaction(database):
            follow.finalise(broadcast, receipt)
            self.close(
                sweep,
                "completed" if receipt.success else "failed",
                amount=amount if receipt.success else 0,
                fee=fee,
                tx_hash=receipt.tx_hash,
                reason=None if receipt.success else "the sweep reverted on chain; its network fee was paid",
            )
            self.charge_deployment(asset.chain_id, f"sweep:{sweep.id}", fee, "the network fee of a sweep")
        log.info("sweep of %s %s from %s completed: %s", amount, asset.code, deposit.address, receipt.tx_hash)
        return 1

    def charge_deployment(self, chain_id: str, ref: str, fee: int, memo: str) -> None:
        """A sweep's (or its gas top-up's) network fee: the deployment's cost, not an operator's
        (ledger/deployment.py), posted in the transaction that records it."""
        native = self.chains.native_or_none(chain_id)
        if native is not None:
            deployment.post_cost(deployment.SWEEP_FEE, chain_id, native.code, fee, ref=ref, memo=memo)

    def _taken(self, chain: Chain, asset: Asset, broadcast: Broadcast, sweep: Sweep) -> int:
        """A sweep whose nonce the chain used with none of its payloads: when the transaction at
        the nonce is foreign (a copy of the key in use elsewhere) and has the asset's
        confirmations, the reservation is final without a receipt and the sweep failed, so that
        the address is swept again at its next deposit; the reconcile's ``unknown_outflow`` at
        that nonce names the transaction. Looked at once per RESEND_AFTER per sweep."""
        if self.fencing is None:
            return 0
        last = self._looked.get(broadcast.id)
        if last is not None and clock.now() - last < follow.RESEND_AFTER:
            return 0
        self._looked[broadcast.id] = clock.now()
        if chain.nonce(broadcast.wallet) <= int(broadcast.nonce):
            return 0
        found = follow.at_nonce(chain, self.fencing, broadcast)
        if found.found is not follow.Found.FOREIGN or found.tx is None:
            return 0
        if found.head - found.tx.block_number + 1 < asset.confirmations:
            return 0  # a reorg may still give the nonce back to the sweep's own payload
        with write_transaction(database):
            follow.finalise(broadcast, None)
            self.close(
                sweep,
                "failed",
                amount=0,
                reason=f"nonce {broadcast.nonce} of {broadcast.wallet} was taken by {found.tx.tx_hash} "
                f"(block {found.tx.block_number}), a transaction this engine did not sign: the sweep "
                "cannot land (reconcile reports it as an unknown_outflow)",
            )
        log.error("sweep %s failed: its nonce was taken by %s", sweep.id, found.tx.tx_hash)
        return 1

    def close(
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

    def follow(
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

    def send(self, chain: Chain, row: Broadcast, sweep_id: int | None) -> None:
        try:
            follow.send_and_mark(chain, row, self._sweep_sent(sweep_id))
        except TransactionRejected as exc:
            self._refused(row, exc)

    def orphans(self, chain_id: str, chain: Chain) -> int:
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
