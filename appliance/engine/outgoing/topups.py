"""Gas top-ups: the fee wallet sends native value to a wallet that must pay gas. One lifecycle for
both kinds: of the payout wallet for the payouts (purpose gas_topup), of a deposit address for
the sweeps of its tokens (purpose sweep_topup, signed through sweeps.signing's rules).

A top-up is a nonce reservation of the fee wallet like any other: reserved, signed and stored in
one write transaction (with the row of what asked for it), then sent and followed (follow.follow)
to the native asset's confirmations.
"""

from __future__ import annotations

import logging

from appliance.common.db import write_transaction
from appliance.engine.chain.base import Chain, ChainError, FeeQuote
from appliance.engine.chain.registry import Asset, Chains
from appliance.engine.custody import FEE_WALLET, CustodyKeys
from appliance.engine.db import database
from appliance.engine.ledger import deployment
from appliance.engine.models import Broadcast
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import follow, state, transactions
from appliance.engine.outgoing.fencing import Fencing

log = logging.getLogger("appliance.engine.payouts")

PAYOUT_TOPUP = "gas_topup"  # Broadcast.purpose of the payout wallet's top-ups
TOPUP_PAYOUTS = 50  # a payout wallet's top-up covers this many payouts like the one that asked


def payout_topup_amount(gas: int, fees: FeeQuote, shortfall: int) -> int:
    """A payout wallet's top-up: what this payout lacks, and at most TOPUP_PAYOUTS such payouts at
    the CURRENT base fee and tip, not at the doubled (and possibly spiked) maximum a payload may
    offer."""
    return max(shortfall, gas * (fee_rules.base_fee(fees) + fees.max_priority_fee_per_gas) * TOPUP_PAYOUTS)


def needed(amount: int, fees: FeeQuote) -> int:
    """What the fee wallet must hold to send a top-up of ``amount``: the value and its own gas."""
    return amount + fee_rules.NATIVE_GAS * fees.max_fee_per_gas


def payout_topup_pending(chain_id: str) -> bool:
    """Whether a top-up of the payout wallet on the chain is unfinished (payouts wait for it)."""
    return bool(
        Broadcast.select()
        .where(
            (Broadcast.purpose == PAYOUT_TOPUP)
            & (Broadcast.chain_id == chain_id)
            & (Broadcast.status.in_(state.UNFINISHED))
        )
        .exists()
    )


def sign(
    custody: CustodyKeys,
    native: Asset,
    top_up: tuple[str, int, FeeQuote],
    known: tuple[int, int],
    purpose: str,
    signer: transactions.Sign | None = None,
) -> Broadcast:
    """Reserve the fee wallet's next nonce and sign and store the top-up ``(to, amount, fees)``
    (inside the caller's write transaction, with the row of what asked for it). ``known``: the
    fee wallet's nonce as the fencing checked it, and the head read before."""
    to, amount, fees = top_up
    call = transactions.Call(to, amount, b"", fee_rules.NATIVE_GAS, fees)
    chain = (native.chain_id, native.network_id)
    return transactions.reserve_and_sign(custody, FEE_WALLET, call, chain, known, purpose, sign=signer)


def replace(
    custody: CustodyKeys,
    chains: Chains,
    row: Broadcast,
    fees: FeeQuote,
    value: int | None = None,
    signer: transactions.Sign | None = None,
) -> Broadcast:
    """Re-sign a reservation's call at its nonce with ``fees`` (and ``value``, when a sweep of the
    native asset moves less to pay them), stored before it is sent (inside the caller's write
    transaction). The key path is the fee wallet's; a sweep's ``signer`` derives its own."""
    to, old_value, data = transactions.decode_call(row)
    network_id = chains.native(row.chain_id).network_id
    return transactions.replace(
        custody,
        FEE_WALLET,
        row,
        network_id,
        to,
        old_value if value is None else value,
        data,
        fees,
        sign=signer,
    )


class TopUpSide(follow.Side):
    """A gas top-up has no row of its own: its side of the moves is the fee wallet's fencing role
    and how it is replaced (under the fee ceiling, or every payout needing gas waits behind it)."""

    noun = "gas top-up"
    role = "fee"

    def __init__(self, custody: CustodyKeys | None, chains: Chains, ceilings: dict[str, int]) -> None:
        self.custody, self.chains, self.ceilings = custody, chains, ceilings

    def bump(self, row: Broadcast, market: FeeQuote) -> Broadcast | None:
        assert self.custody is not None
        fees = fee_rules.bumped_fees(row, market, self.ceilings.get(row.chain_id))
        if fees is None:
            log.warning(
                "gas top-up %s is below the market and a replacement would exceed max_fee_per_gas",
                row.tx_hash,
            )
            return None
        with write_transaction(database):
            replace(self.custody, self.chains, row, fees)
        log.info("gas top-up at nonce %s replaced with %s wei/gas", row.nonce, fees.max_fee_per_gas)
        return row


class PayoutTopUps:
    """Following the payout wallet's top-ups (follow.follow), at each pass of the payout pipeline."""

    def __init__(
        self, chains: Chains, custody: CustodyKeys | None, fencing: Fencing, ceilings: dict[str, int]
    ):
        self.chains = chains
        self.fencing = fencing
        self.side = TopUpSide(custody, chains, ceilings)

    def advance(self) -> None:
        rows = list(
            Broadcast.select().where(
                (Broadcast.purpose == PAYOUT_TOPUP) & (Broadcast.status.in_(state.UNFINISHED))
            )
        )
        for row in rows:
            chain = self.chains.get(row.chain_id)
            if chain is None:
                continue
            try:
                self._advance(chain, row)
            except ChainError as exc:
                log.warning("gas top-up %s: %s", row.tx_hash, exc)
            except state.StaleBroadcast:
                pass  # another node moved it meanwhile: looked at again at the next pass

    def _advance(self, chain: Chain, row: Broadcast) -> None:
        confirmations = self.chains.native(row.chain_id).confirmations
        course = follow.Course(confirmations, lambda: chain.head().number, self.fencing)
        receipt = follow.follow(chain, row, course, self.side).receipt
        if receipt is not None:
            with write_transaction(database):
                follow.finalise(row, receipt)
                # The fee wallet paid its network fee: the deployment's cost, as a sweep's top-up is.
                deployment.post_cost(
                    deployment.TOPUP_FEE,
                    row.chain_id,
                    self.chains.native(row.chain_id).code,
                    receipt.gas_used * receipt.effective_gas_price,
                    ref=f"gas_topup:{row.id}",
                    memo="the network fee of the payout wallet's gas top-up",
                )
