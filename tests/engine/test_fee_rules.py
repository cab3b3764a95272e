"""appliance.engine.outgoing.fees: the fee arithmetic of every transaction the engine sends, at its
boundaries. A Broadcast is built in memory (never saved): the rules read only its two fees.

A replacement at a nonce is judged as geth's pool judges it (core/txpool/legacypool, with the
default --txpool.pricebump of 10): both its max fee and its tip must be above the old ones and at
least old × 110 / 100 (integer division); other nodes ask the same or less."""

from __future__ import annotations

import pytest

from appliance.engine.chain.base import FeeQuote
from appliance.engine.models import Broadcast
from appliance.engine.outgoing.fees import base_fee, bumped_fees, capped_fees, outgrown, with_margin

GWEI = 10**9


def in_force(max_fee: int, tip: int) -> Broadcast:
    """The payload in force at a nonce, as stored (its fees are decimal strings)."""
    return Broadcast(max_fee_per_gas=str(max_fee), max_priority_fee_per_gas=str(tip))


def geth_accepts_replacement(old: FeeQuote, new: FeeQuote) -> bool:
    if (
        new.max_fee_per_gas <= old.max_fee_per_gas
        or new.max_priority_fee_per_gas <= old.max_priority_fee_per_gas
    ):
        return False
    return (
        new.max_fee_per_gas >= old.max_fee_per_gas * 110 // 100
        and new.max_priority_fee_per_gas >= old.max_priority_fee_per_gas * 110 // 100
    )


OLD_FEES = [
    (1, 1),
    (7, 3),
    (10, 10),
    (99, 9),
    (21 * GWEI, GWEI),
    (2 * GWEI + 1, GWEI),
    (10**30 + 7, 10**18 + 3),
]


def test_the_base_fee_of_a_quote_is_half_of_what_its_maximum_offers_above_the_tip() -> None:
    assert base_fee(FeeQuote(21 * GWEI, GWEI)) == 10 * GWEI
    assert base_fee(FeeQuote(21 * GWEI + 1, GWEI)) == 10 * GWEI  # an odd remainder rounds down
    assert base_fee(FeeQuote(GWEI, GWEI)) == 0


@pytest.mark.parametrize(("old_max", "old_tip"), OLD_FEES)
def test_a_bump_over_a_quiet_market_is_a_replacement_geth_accepts(old_max: int, old_tip: int) -> None:
    quiet = FeeQuote(1, 0)
    bumped = bumped_fees(in_force(old_max, old_tip), quiet)
    assert bumped is not None
    assert geth_accepts_replacement(FeeQuote(old_max, old_tip), bumped)
    assert bumped.max_priority_fee_per_gas <= bumped.max_fee_per_gas


def test_a_bump_is_twelve_and_a_half_percent_and_one_wei_above_the_payload_in_force() -> None:
    bumped = bumped_fees(in_force(20 * GWEI, 2 * GWEI), FeeQuote(1, 0))
    assert bumped == FeeQuote(22_500_000_001, 2_250_000_001)


def test_a_bump_below_a_risen_market_offers_the_market() -> None:
    market = FeeQuote(50 * GWEI, 3 * GWEI)
    assert bumped_fees(in_force(20 * GWEI, 2 * GWEI), market) == market


def test_a_bump_takes_the_larger_of_the_least_replacement_and_the_market_for_each_fee() -> None:
    # The market's max fee is above the least replacement, its tip below it.
    bumped = bumped_fees(in_force(20 * GWEI, 2 * GWEI), FeeQuote(30 * GWEI, GWEI))
    assert bumped == FeeQuote(30 * GWEI, 2_250_000_001)


def test_a_bump_whose_tip_outgrows_its_max_fee_raises_the_max_fee_to_the_tip() -> None:
    # A payload whose tip equals its max fee: the least tip is then the least max fee too.
    bumped = bumped_fees(in_force(10, 10), FeeQuote(1, 0))
    assert bumped == FeeQuote(12, 12)


@pytest.mark.parametrize(("old_max", "old_tip"), OLD_FEES)
def test_a_bump_under_a_ceiling_it_fits_is_a_replacement_geth_accepts_and_stays_under_it(
    old_max: int, old_tip: int
) -> None:
    market = FeeQuote(old_max * 3, old_tip * 3)  # a market far above the ceiling
    ceiling = old_max * 1125 // 1000 + 1
    bumped = bumped_fees(in_force(old_max, old_tip), market, ceiling)
    assert bumped is not None
    assert bumped.max_fee_per_gas <= ceiling
    assert bumped.max_priority_fee_per_gas <= bumped.max_fee_per_gas
    assert geth_accepts_replacement(FeeQuote(old_max, old_tip), bumped)


def test_a_bump_whose_least_replacement_is_exactly_the_ceiling_offers_the_ceiling() -> None:
    ceiling = 22_500_000_001
    bumped = bumped_fees(in_force(20 * GWEI, 2 * GWEI), FeeQuote(40 * GWEI, 2 * GWEI), ceiling)
    assert bumped == FeeQuote(ceiling, 2_250_000_001)


def test_no_bump_when_the_least_replacement_is_one_wei_above_the_ceiling() -> None:
    assert bumped_fees(in_force(20 * GWEI, 2 * GWEI), FeeQuote(1, 0), 22_500_000_000) is None


def test_a_bump_under_a_ceiling_the_market_is_below_offers_the_market() -> None:
    market = FeeQuote(30 * GWEI, 3 * GWEI)
    assert bumped_fees(in_force(20 * GWEI, 2 * GWEI), market, 100 * GWEI) == market


def test_a_bump_cut_to_the_ceiling_cuts_a_market_tip_above_it_to_the_ceiling_too() -> None:
    ceiling = 25 * GWEI
    bumped = bumped_fees(in_force(20 * GWEI, 2 * GWEI), FeeQuote(90 * GWEI, 40 * GWEI), ceiling)
    assert bumped == FeeQuote(ceiling, ceiling)


def test_a_payload_is_outgrown_only_once_the_markets_base_fee_is_above_what_it_pays_for_it() -> None:
    payload = in_force(21 * GWEI, GWEI)  # pays up to 20 gwei of base fee
    at_the_edge = FeeQuote(41 * GWEI, GWEI)  # base fee exactly 20 gwei
    one_wei_past = FeeQuote(41 * GWEI + 2, GWEI)  # base fee 20 gwei + 1 wei
    assert not outgrown(payload, at_the_edge)
    assert outgrown(payload, one_wei_past)


def test_a_payload_is_not_outgrown_by_a_market_whose_tip_alone_rose() -> None:
    payload = in_force(21 * GWEI, GWEI)
    assert not outgrown(payload, FeeQuote(40 * GWEI, 20 * GWEI))  # base fee 10 gwei


def test_fees_under_no_ceiling_or_a_ceiling_at_the_markets_maximum_are_the_market() -> None:
    market = FeeQuote(21 * GWEI, GWEI)
    assert capped_fees(market, None) == market
    assert capped_fees(market, 21 * GWEI) == market


def test_fees_above_a_ceiling_that_still_covers_base_fee_and_tip_are_cut_to_the_ceiling() -> None:
    market = FeeQuote(21 * GWEI, GWEI)  # base fee 10 gwei
    assert capped_fees(market, 21 * GWEI - 1) == FeeQuote(21 * GWEI - 1, GWEI)
    assert capped_fees(market, 11 * GWEI) == FeeQuote(11 * GWEI, GWEI)


def test_no_fees_when_the_ceiling_is_one_wei_below_base_fee_and_tip() -> None:
    assert capped_fees(FeeQuote(21 * GWEI, GWEI), 11 * GWEI - 1) is None


def test_a_plain_transfer_gets_exactly_its_gas_and_anything_else_thirty_percent_more() -> None:
    assert with_margin(21_000) == 21_000
    assert with_margin(21_001) == 27_301
    assert with_margin(65_000) == 84_500
    assert with_margin(20_999) == 27_298
