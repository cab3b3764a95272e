"""Open sweeps on their way: the sweep's and its gas top-up's reservations followed on the
lifecycle every transaction of the engine shares (appliance.engine.outgoing.follow), the sweep's
row moving with them in the same transactions."""

from __future__ import annotations

import logging
from collections.abc import Callable

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.engine.chain.base import Chain, ChainTransaction, FeeQuote, Receipt
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
        self.once, self._head, self._signer = once, head, signer
        self.fencing = fencing

    def advance_sweep(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int:
        broadcast = Broadcast.get_by_id(sweep.broadcast_id)
        receipt = self.follow(chain, broadcast, SWEEP, deposit, asset.confirmations, sweep)
        if receipt is None:
            return int(broadcast.status == "final")  # its nonce taken by a foreign transaction
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

    def advance_topup(self, chain: Chain, asset: Asset, deposit: DepositAddress, sweep: Sweep) -> int | None:
        """One look at a token sweep's gas top-up: None once it is final and succeeded (the token's
        transfer is signed next), else how many sweeps moved (1: it failed, or its nonce was taken)."""
        topup = Broadcast.get_by_id(sweep.topup_id)
        if topup.status == "final":
            return None
        confirmations = self.chains.native(asset.chain_id).confirmations
        receipt = self.follow(chain, topup, TOPUP, deposit, confirmations, sweep)
        if receipt is None:
            return int(topup.status == "final")  # its nonce taken: the sweep failed
        with write_transaction(database):
            follow.finalise(topup, receipt)
            fee = receipt.gas_used * receipt.effective_gas_price
            self.charge_deployment(
                asset.chain_id, f"sweep_topup:{topup.id}", fee, "the network fee of a sweep's gas top-up"
            )
            if not receipt.success:  # a plain transfer does not revert; counted all the same
                self.close(sweep, "failed", reason=f"the gas top-up {receipt.tx_hash} reverted")
                return 1
        return None

    def charge_deployment(self, chain_id: str, ref: str, fee: int, memo: str) -> None:
        """A sweep's (or its gas top-up's) network fee: the deployment's cost, not an operator's
        (ledger/deployment.py), posted in the transaction that records it."""
        native = self.chains.native_or_none(chain_id)
        if native is not None:
            deployment.post_cost(deployment.SWEEP_FEE, chain_id, native.code, fee, ref=ref, memo=memo)

    @staticmethod
    def close(
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
        sweep: Sweep,
    ) -> Receipt | None:
        """One look at the sweep's (or its top-up's) reservation (follow.follow): its receipt once
        it has ``confirmations``, else None."""
        course = follow.Course(confirmations, lambda: self._head(chain), self.fencing)
        return follow.follow(chain, row, course, SweepSide(self, chain, kind, deposit, sweep)).receipt

    def bump(
        self,
        chain: Chain,
        row: Broadcast,
        kind: str,
        deposit: DepositAddress,
        market: FeeQuote,
        sweep: Sweep,
    ) -> Broadcast | None:
        """Replace the payload at the same nonce under the fee ceiling, stored before it is sent."""
        assert self.custody is not None
        fees = fee_rules.bumped_fees(row, market, self.ceilings.get(row.chain_id))
        if fees is None:
            self.once(
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
            self.once(
                f"bump:{row.id}",
                "sweeps: the token sweep %s cannot be replaced: the address lacks the gas of a higher fee",
                row.tx_hash,
            )
            return None
        with write_transaction(database):
            topups.replace(self.custody, self.chains, row, fees, value, self._signer(kind, deposit))
            if kind == SWEEP:
                fields: dict[str, object] = {
                    "status": "signed",
                    "tx_hash": row.tx_hash,
                    "updated_at": clock.now(),
                }
                if not data:
                    fields["amount_minor"] = str(value)
                Sweep.update(**fields).where(Sweep.id == sweep.id).execute()
        log.info("sweeps: %s at nonce %s replaced with %s wei/gas", kind, row.nonce, fees.max_fee_per_gas)
        return row

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


class SweepSide(follow.Side):
    """A sweep's side of its reservation's moves, or of its gas top-up's (the fee wallet's): the
    sweep's row sent, replaced, adopted, or failed when a foreign transaction took the nonce (the
    address is swept again at its next deposit; the reconcile's ``unknown_outflow`` names it)."""

    def __init__(
        self, following: SweepFollowing, chain: Chain, kind: str, deposit: DepositAddress, sweep: Sweep
    ) -> None:
        self.following, self.chain, self.kind = following, chain, kind
        self.deposit, self.sweep = deposit, sweep
        self.noun = "sweep" if kind == SWEEP else "sweep's gas top-up"
        self.role = None if kind == SWEEP else "fee"  # a deposit address is not fenced

    def sent(self, row: Broadcast, tx_hash: str) -> None:
        if self.kind == SWEEP:
            Sweep.update(status="sent", updated_at=clock.now()).where(
                (Sweep.id == self.sweep.id) & (Sweep.status == "signed")
            ).execute()

    def adopted(self, row: Broadcast, tx_hash: str) -> None:
        if self.kind == SWEEP:
            Sweep.update(tx_hash=tx_hash, updated_at=clock.now()).where(Sweep.id == self.sweep.id).execute()

    def taken(self, row: Broadcast, tx: ChainTransaction) -> None:
        self.following.close(
            self.sweep,
            "failed",
            amount=0 if self.kind == SWEEP else None,
            reason=f"nonce {row.nonce} of {row.wallet} ({self.noun}) was taken by {tx.tx_hash} "
            f"(block {tx.block_number}), a transaction this engine did not sign: the sweep cannot "
            "land (reconcile reports it as an unknown_outflow)",
        )

    def bump(self, row: Broadcast, market: FeeQuote) -> Broadcast | None:
        return self.following.bump(self.chain, row, self.kind, self.deposit, market, self.sweep)

    def wait(self, reason: str) -> None:
        self.following.once(
            f"wait:{self.sweep.id}:{reason}", "sweeps: %s %s waits: %s", self.noun, self.sweep.id, reason
        )
