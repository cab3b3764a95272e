"""The fee arithmetic of every transaction the engine sends, written once.

A FeeQuote offers ``max_fee_per_gas = 2 × base fee + tip`` (the market's base fee may double
before the payload is included), so the base fee a quote stands for is (max − tip) / 2. A payload
whose own (max − tip) is below the market's base fee can never be included: it is replaced at its
nonce (a bump) under the chain's ceiling (the settings' max_fee_per_gas).
"""

from __future__ import annotations

from appliance.engine.chain.base import FeeQuote
from appliance.engine.models import Broadcast

NATIVE_GAS = 21_000  # a plain transfer to an account without code
GAS_MARGIN_NUMERATOR, GAS_MARGIN_DENOMINATOR = 13, 10  # estimates get +30 %
BUMP_NUMERATOR, BUMP_DENOMINATOR = 1125, 1000  # +12.5 %: above the 10 % every node requires


def base_fee(quote: FeeQuote) -> int:
    """The base fee a quote stands for (its maximum is twice the base fee plus the tip)."""
    return (quote.max_fee_per_gas - quote.max_priority_fee_per_gas) // 2


def outgrown(broadcast: Broadcast, market: FeeQuote) -> bool:
    """Whether the market's base fee has outgrown what the payload in force may pay for it: it
    cannot be included at all until it is replaced."""
    return base_fee(market) > int(broadcast.max_fee_per_gas) - int(broadcast.max_priority_fee_per_gas)


def with_margin(estimate: int) -> int:
    """A plain transfer to an account without code costs exactly 21,000 gas; anything else (a
    token, a smart-contract wallet such as a Safe or an ERC-4337 account receiving ETH) gets +30 %
    over the node's estimate, unused gas being refunded."""
    if estimate == NATIVE_GAS:
        return NATIVE_GAS
    return estimate * GAS_MARGIN_NUMERATOR // GAS_MARGIN_DENOMINATOR


def capped_fees(quote: FeeQuote, ceiling: int | None) -> FeeQuote | None:
    """The market's fees under a chain's ceiling (its max_fee_per_gas, None: none): None when even
    the base fee and the tip are above it (nothing offered under it could be included now)."""
    if ceiling is None or quote.max_fee_per_gas <= ceiling:
        return quote
    if base_fee(quote) + quote.max_priority_fee_per_gas > ceiling:
        return None
    return FeeQuote(max_fee_per_gas=ceiling, max_priority_fee_per_gas=quote.max_priority_fee_per_gas)


def within(fees: FeeQuote, gas: int, held: int) -> FeeQuote | None:
    """``fees`` lowered to what ``held`` wei pay for ``gas`` (an address that holds a top-up made
    at a lower fee), when the block still takes that; None when it does not."""
    if gas * fees.max_fee_per_gas <= held:
        return fees
    cap = held // gas
    tip = min(fees.max_priority_fee_per_gas, cap)
    if cap < base_fee(fees) + tip:
        return None
    return FeeQuote(max_fee_per_gas=cap, max_priority_fee_per_gas=tip)


def bumped_fees(broadcast: Broadcast, market: FeeQuote, ceiling: int | None = None) -> FeeQuote | None:
    """Fees of a replacement: at least 12.5 % above the payload in force, and at the market, but
    not above ``ceiling`` (the chain's max_fee_per_gas): None when the least replacement a node
    accepts would be above it."""
    old_max, old_tip = int(broadcast.max_fee_per_gas), int(broadcast.max_priority_fee_per_gas)
    least_tip = old_tip * BUMP_NUMERATOR // BUMP_DENOMINATOR + 1
    least_fee = max(old_max * BUMP_NUMERATOR // BUMP_DENOMINATOR + 1, least_tip)
    tip = max(least_tip, market.max_priority_fee_per_gas)
    fee = max(least_fee, market.max_fee_per_gas, tip)
    if ceiling is not None:
        if least_fee > ceiling:
            return None
        fee = min(fee, ceiling)
        tip = min(tip, fee)
    return FeeQuote(max_fee_per_gas=fee, max_priority_fee_per_gas=tip)
