"""The facts a token sweep's readiness (sweeps.readiness) is judged by, read from the chain each
once and only when the decision asks for it."""

from __future__ import annotations

import functools

from appliance.engine.chain.base import Chain, EstimateReverted, FeeQuote
from appliance.engine.chain.registry import Asset
from appliance.engine.models import DepositAddress
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import transactions


class TokenSweepFacts:
    def __init__(
        self, chain: Chain, asset: Asset, deposit: DepositAddress, payout_wallet: str, ceiling: int | None
    ) -> None:
        self.chain, self.asset, self.deposit = chain, asset, deposit
        self.payout_wallet, self.ceiling = payout_wallet, ceiling

    @functools.cached_property
    def held(self) -> int:
        return self.chain.balance(self.deposit.address, self.asset.contract)

    @functools.cached_property
    def transfer(self) -> tuple[int, bytes, int] | str:
        """(token balance, transfer data, gas) of sweeping the address's whole token balance, or
        why it cannot be swept (the transfer would revert). The balance is the one ``held`` read:
        a second read could be lower than the one the minimum was judged by (a token leaving by
        other means meanwhile) and sign a sweep at or below the minimum, even of nothing."""
        held = self.held
        data = transactions.erc20_transfer_data(self.payout_wallet, held)
        try:
            estimate = self.chain.estimate_gas(self.deposit.address, self.asset.contract or "", 0, data)
        except EstimateReverted as exc:
            return f"the transfer would revert on chain ({exc.reason[:300]}); nothing was signed"
        return held, data, fee_rules.with_margin(estimate)

    @functools.cached_property
    def gas_held(self) -> int:
        return self.chain.balance(self.deposit.address)

    @functools.cached_property
    def fees(self) -> FeeQuote | None:
        return fee_rules.capped_fees(self.chain.fee_quote(), self.ceiling)
