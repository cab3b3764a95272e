"""appliance.engine.sweeps.readiness: decide_native, decide_token and decide_after_topup, branch by
branch and at their boundaries, over facts given in the test (no chain, no database).

The facts object below has exactly what the decisions read (readiness.TokenFacts) and notes what
was asked for: a balance not worth sweeping costs no gas estimate."""

from __future__ import annotations

from typing import Any

from appliance.engine.chain.base import FeeQuote
from appliance.engine.outgoing.transactions import Call
from appliance.engine.sweeps.readiness import (
    Fail,
    Sign,
    Skip,
    TopUp,
    Wait,
    WaitKind,
    decide_after_topup,
    decide_native,
    decide_token,
)

PAYOUT_WALLET = "0x" + "5a" * 20
CONTRACT = "0x" + "C0" * 20
# max = 2 × base + tip: base fee 10 gwei, tip 1 gwei.
FEES = FeeQuote(max_fee_per_gas=21_000_000_000, max_priority_fee_per_gas=1_000_000_000)
PLAIN_FEE = 21_000 * FEES.max_fee_per_gas  # what a native sweep pays for its own gas at most
GAS = 84_500
GAS_COST = GAS * FEES.max_fee_per_gas
DATA = bytes.fromhex("a9059cbb") + bytes(64)


class GivenFacts:
    """readiness.TokenFacts with given answers; ``asked`` lists the facts read, first read first."""

    def __init__(self, **given: Any) -> None:
        self.given: dict[str, Any] = {
            "held": 10_000,
            "transfer": (10_000, DATA, GAS),
            "gas_held": 0,
            "fees": FEES,
            **given,
        }
        self.asked: list[str] = []

    def _answer(self, name: str) -> Any:
        if name not in self.asked:
            self.asked.append(name)
        return self.given[name]

    held = property(lambda self: self._answer("held"))
    transfer = property(lambda self: self._answer("transfer"))
    gas_held = property(lambda self: self._answer("gas_held"))
    fees = property(lambda self: self._answer("fees"))


# decide_native


def test_a_native_balance_exactly_at_the_minimum_is_skipped_as_held() -> None:
    least = PLAIN_FEE + 10**15
    verdict = decide_native(least, least, FEES, PAYOUT_WALLET)
    assert verdict == Skip(
        f"holds {least}, not above the minimum of {least} (sweep_min_minor, or the sweep's own fee)", least
    )


def test_a_native_balance_one_wei_above_the_minimum_is_swept_whole_less_its_own_fee() -> None:
    least = PLAIN_FEE + 10**15
    verdict = decide_native(least + 1, least, FEES, PAYOUT_WALLET)
    value = least + 1 - PLAIN_FEE
    assert verdict == Sign(Call(PAYOUT_WALLET, value, b"", 21_000, FEES), value)


def test_a_native_balance_of_exactly_its_own_fee_is_skipped_having_nothing_to_move() -> None:
    assert decide_native(PLAIN_FEE, 0, FEES, PAYOUT_WALLET) == Skip(
        f"holds {PLAIN_FEE}, not above the minimum of 0 (sweep_min_minor, or the sweep's own fee)", PLAIN_FEE
    )


def test_a_native_balance_one_wei_above_its_own_fee_sweeps_that_one_wei() -> None:
    verdict = decide_native(PLAIN_FEE + 1, 0, FEES, PAYOUT_WALLET)
    assert verdict == Sign(Call(PAYOUT_WALLET, 1, b"", 21_000, FEES), 1)
    assert verdict.gas_cost == PLAIN_FEE


def test_a_native_balance_below_its_own_fee_is_skipped_even_above_the_minimum() -> None:
    verdict = decide_native(PLAIN_FEE - 1, 5, FEES, PAYOUT_WALLET)
    assert isinstance(verdict, Skip) and verdict.held == PLAIN_FEE - 1


# decide_token


def test_a_token_balance_exactly_at_the_minimum_is_skipped_without_estimating_its_transfer() -> None:
    facts = GivenFacts(held=500)
    verdict = decide_token(facts, 500, FEES, CONTRACT)
    assert verdict == Skip("holds 500, not above the minimum of 500 (sweep_min_minor)", 500)
    assert facts.asked == ["held"]


def test_a_token_balance_one_unit_above_the_minimum_is_looked_at() -> None:
    facts = GivenFacts(held=501, transfer=(501, DATA, GAS), gas_held=GAS_COST)
    assert decide_token(facts, 500, FEES, CONTRACT) == Sign(Call(CONTRACT, 0, DATA, GAS, FEES), 501)


def test_a_token_sweep_whose_transfer_would_revert_fails_recording_what_was_held() -> None:
    words = "the transfer would revert on chain (execution reverted: paused); nothing was signed"
    facts = GivenFacts(held=700, transfer=words)
    assert decide_token(facts, 0, FEES, CONTRACT) == Fail(words, 700)
    assert "gas_held" not in facts.asked


def test_a_token_address_without_gas_asks_the_fee_wallet_for_exactly_the_gas_it_lacks() -> None:
    facts = GivenFacts(gas_held=10**9)
    assert decide_token(facts, 0, FEES, CONTRACT) == TopUp(GAS_COST - 10**9, FEES, 10_000)


def test_a_token_address_one_wei_short_of_its_gas_asks_for_that_one_wei() -> None:
    facts = GivenFacts(gas_held=GAS_COST - 1)
    assert decide_token(facts, 0, FEES, CONTRACT) == TopUp(1, FEES, 10_000)


def test_a_token_address_holding_exactly_its_gas_is_swept_without_a_top_up() -> None:
    facts = GivenFacts(gas_held=GAS_COST)
    verdict = decide_token(facts, 0, FEES, CONTRACT)
    assert verdict == Sign(Call(CONTRACT, 0, DATA, GAS, FEES), 10_000)
    assert verdict.gas_cost == GAS_COST


def test_a_token_sweep_moves_the_balance_its_transfer_was_built_for_not_the_first_reading() -> None:
    # The balance is read again with the transfer (a deposit may have landed in between).
    facts = GivenFacts(held=1_000, transfer=(1_200, DATA, GAS), gas_held=0)
    assert decide_token(facts, 0, FEES, CONTRACT) == TopUp(GAS_COST, FEES, 1_200)


# decide_after_topup


def test_after_a_top_up_a_transfer_that_would_revert_fails() -> None:
    assert decide_after_topup(GivenFacts(transfer="reverts"), CONTRACT) == Fail("reverts")


def test_after_a_top_up_an_address_emptied_of_the_token_fails() -> None:
    facts = GivenFacts(transfer=(0, DATA, GAS), gas_held=GAS_COST)
    assert decide_after_topup(facts, CONTRACT) == Fail("the address holds none of the token any more")


def test_after_a_top_up_a_fee_above_the_ceiling_waits_for_it_to_fall() -> None:
    facts = GivenFacts(gas_held=GAS_COST, fees=None)
    verdict = decide_after_topup(facts, CONTRACT)
    assert verdict == Wait(WaitKind.FEE_RISEN)


def test_after_a_top_up_holding_exactly_the_gas_at_the_market_signs_at_the_market() -> None:
    facts = GivenFacts(gas_held=GAS_COST)
    assert decide_after_topup(facts, CONTRACT) == Sign(Call(CONTRACT, 0, DATA, GAS, FEES), 10_000)


def test_after_a_top_up_one_wei_short_signs_at_the_lower_fee_the_address_can_pay() -> None:
    facts = GivenFacts(gas_held=GAS_COST - 1)
    verdict = decide_after_topup(facts, CONTRACT)
    lowered = FeeQuote((GAS_COST - 1) // GAS, FEES.max_priority_fee_per_gas)
    assert verdict == Sign(Call(CONTRACT, 0, DATA, GAS, lowered), 10_000)
    assert verdict.gas_cost <= GAS_COST - 1


def test_after_a_top_up_a_fee_lowered_to_exactly_base_fee_and_tip_is_still_signed() -> None:
    least = 11_000_000_000  # base fee 10 gwei + tip 1 gwei: the block still takes it
    facts = GivenFacts(gas_held=GAS * least)
    verdict = decide_after_topup(facts, CONTRACT)
    assert verdict == Sign(
        Call(CONTRACT, 0, DATA, GAS, FeeQuote(least, FEES.max_priority_fee_per_gas)), 10_000
    )


def test_after_a_top_up_a_fee_one_wei_below_base_fee_and_tip_waits_for_the_fee_to_fall() -> None:
    facts = GivenFacts(gas_held=GAS * 11_000_000_000 - 1)
    assert decide_after_topup(facts, CONTRACT) == Wait(WaitKind.FEE_RISEN)


def test_every_sweep_wait_kind_has_its_own_log_key_and_words() -> None:
    keys = [kind.key for kind in WaitKind]
    assert len(set(keys)) == len(keys)
    for kind in WaitKind:
        assert kind.key and kind.text.strip() and "%s" in kind.text, kind
