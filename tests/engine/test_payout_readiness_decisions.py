"""appliance.engine.payouts.readiness.decide, question by question, over facts given in the test:
no HTTP, no chain, no database (a Payout is built in memory and never saved).

The facts object below has exactly what ``decide`` reads (readiness.Facts) and notes what it was
asked for, so that the order of the questions (no chain call for a held payout, no estimate before
the funds are known) is checked too."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.engine.chain.base import FeeQuote
from appliance.engine.chain.registry import Asset
from appliance.engine.models import Payout
from appliance.engine.outgoing.fencing import Fenced, Pending, Scanning
from appliance.engine.outgoing.transactions import Call
from appliance.engine.payouts import facts as payout_facts
from appliance.engine.payouts.readiness import (
    REASON_LENGTH,
    Adopted,
    Fail,
    Sign,
    Stop,
    TopUp,
    Wait,
    WaitKind,
    decide,
    stopped,
    unfunded,
    wait,
)

ETH = Asset("eth_local", "ETH", "native", 18, 1, None, 1337, "local")
USDC_CONTRACT = "0x" + "C0" * 20
USDC = Asset("eth_local", "USDC", "ERC20", 6, 1, USDC_CONTRACT, 1337, "local")
WALLET = "0x" + "5a" * 20
DESTINATION = "0x" + "ab" * 20
# max = 2 × base + tip: base fee 10 gwei, tip 1 gwei.
FEES = FeeQuote(max_fee_per_gas=21_000_000_000, max_priority_fee_per_gas=1_000_000_000)
TOKEN_GAS = 65_000


def payout(amount: str = "5000", asset: str = "ETH") -> Payout:
    return Payout(
        payout_id="pyo_decide0001",
        asset=asset,
        chain_id="eth_local",
        amount_minor=amount,
        destination=DESTINATION,
        status="REQUESTED",
    )


class GivenFacts:
    """readiness.Facts with given answers; ``asked`` lists the facts the decision read, in the order
    first read."""

    def __init__(self, **given: Any) -> None:
        self.given: dict[str, Any] = {
            "custody_missing": None,
            "asset": ETH,
            "native": ETH,
            "hold": None,
            "wallet": WALLET,
            "stop": None,
            "still_requested": True,
            "fees": FEES,
            "ceiling": None,
            "token_held": 0,
            "native_held": 10**18,
            "gas": 21_000,
            **given,
        }
        self.asked: list[str] = []
        self.estimated: list[Call] = []

    def _answer(self, name: str) -> Any:
        if name not in self.asked:  # PayoutFacts reads each fact once and keeps it
            self.asked.append(name)
        return self.given[name]

    custody_missing = property(lambda self: self._answer("custody_missing"))
    asset = property(lambda self: self._answer("asset"))
    native = property(lambda self: self._answer("native"))
    hold = property(lambda self: self._answer("hold"))
    wallet = property(lambda self: self._answer("wallet"))
    stop = property(lambda self: self._answer("stop"))
    still_requested = property(lambda self: self._answer("still_requested"))
    fees = property(lambda self: self._answer("fees"))
    ceiling = property(lambda self: self._answer("ceiling"))
    token_held = property(lambda self: self._answer("token_held"))
    native_held = property(lambda self: self._answer("native_held"))

    def gas(self, call: Call) -> int | str:
        self.estimated.append(call)
        return self._answer("gas")


def token_transfer_data(to: str, amount: int) -> bytes:
    """transfer(address,uint256) encoded by hand: selector a9059cbb, then two 32-byte words."""
    return bytes.fromhex("a9059cbb") + bytes.fromhex(to[2:]).rjust(32, b"\0") + amount.to_bytes(32, "big")


def test_a_payout_without_a_custody_key_waits_for_it_and_asks_nothing_else() -> None:
    facts = GivenFacts(custody_missing="waiting for the custody key")
    verdict = decide(payout(), facts)
    assert verdict == Wait(WaitKind.CUSTODY, {"reason": "waiting for the custody key"})
    assert verdict.reason == "waiting for the custody key"
    assert facts.asked == ["custody_missing"]


def test_a_payout_on_a_chain_not_configured_here_waits_naming_the_chain() -> None:
    facts = GivenFacts(asset=None)
    verdict = decide(payout(), facts)
    assert isinstance(verdict, Wait) and verdict.kind is WaitKind.NOT_CONFIGURED
    assert verdict.reason == "chain eth_local is not configured on this deployment"
    assert "hold" not in facts.asked


def test_a_payout_its_operators_controls_hold_waits_with_their_words_and_costs_no_chain_call() -> None:
    facts = GivenFacts(hold="payouts of this operator are paused")
    verdict = decide(payout(), facts)
    assert verdict == Wait(WaitKind.HELD, {"reason": "payouts of this operator are paused"})
    assert facts.asked == ["custody_missing", "asset", "hold"]
    assert facts.estimated == []


@pytest.mark.parametrize("kind", [WaitKind.SCANNING, WaitKind.FENCED, WaitKind.POOL, WaitKind.NONCE_AHEAD])
def test_a_payout_whose_wallet_the_fencing_stops_waits_with_the_fencings_kind_and_reason(
    kind: WaitKind,
) -> None:
    # An empty wallet: the fencing is asked before the funds (a restored copy must find what
    # another copy already paid even when the wallet is empty now).
    facts = GivenFacts(stop=Stop(kind, "nonce 7 is foreign"), native_held=0)
    verdict = decide(payout(), facts)
    assert isinstance(verdict, Wait) and verdict.kind is kind
    assert verdict.reason == "signing for the payout wallet on eth_local is stopped: nonce 7 is foreign"
    assert "still_requested" not in facts.asked
    assert "native_held" not in facts.asked


def test_a_payout_adopted_while_the_fencing_looked_is_left_alone() -> None:
    facts = GivenFacts(still_requested=False)
    assert decide(payout(), facts) == Adopted()
    assert "fees" not in facts.asked
    assert facts.estimated == []


def test_a_payout_waits_naming_the_ceiling_when_the_fee_is_above_it() -> None:
    facts = GivenFacts(fees=None, ceiling=5_000_000_000)
    verdict = decide(payout(), facts)
    assert isinstance(verdict, Wait) and verdict.kind is WaitKind.ABOVE_CEILING
    assert "max_fee_per_gas (5000000000 wei per gas)" in verdict.reason
    assert verdict.reason.startswith("the network fee on eth_local is above")
    assert facts.estimated == []


def test_a_token_payout_the_wallet_cannot_cover_waits_unfunded_without_estimating_gas() -> None:
    facts = GivenFacts(asset=USDC, token_held=4999)
    verdict = decide(payout("5000", "USDC"), facts)
    assert verdict == Wait(
        WaitKind.UNFUNDED,
        {
            "role": "payout wallet",
            "address": WALLET,
            "needed": 5000,
            "code": "USDC",
            "chain_id": "eth_local",
            "held": 4999,
        },
    )
    assert facts.estimated == []


def test_a_token_payout_shows_nothing_held_when_in_flight_transfers_exceed_the_balance() -> None:
    facts = GivenFacts(asset=USDC, token_held=-300)
    verdict = decide(payout("5000", "USDC"), facts)
    assert isinstance(verdict, Wait) and verdict.details["held"] == 0
    assert "holds 0 available" in verdict.reason


def test_a_token_payout_of_exactly_the_wallets_balance_is_signed() -> None:
    facts = GivenFacts(asset=USDC, token_held=5000, gas=TOKEN_GAS)
    assert isinstance(decide(payout("5000", "USDC"), facts), Sign)


def test_a_native_payout_above_the_wallets_ether_waits_for_the_value_and_a_plain_transfers_gas() -> None:
    facts = GivenFacts(native_held=4999)
    verdict = decide(payout("5000"), facts)
    assert isinstance(verdict, Wait) and verdict.kind is WaitKind.UNFUNDED
    assert verdict.details == {
        "role": "payout wallet",
        "address": WALLET,
        "needed": 5000 + 21_000 * FEES.max_fee_per_gas,
        "code": "ETH",
        "chain_id": "eth_local",
        "held": 4999,
    }
    assert facts.estimated == []


def test_a_token_payout_whose_in_flight_gas_exceeds_the_ether_waits_for_the_gas_of_a_plain_transfer() -> None:
    facts = GivenFacts(asset=USDC, token_held=5000, native_held=-1)
    verdict = decide(payout("5000", "USDC"), facts)
    assert isinstance(verdict, Wait) and verdict.kind is WaitKind.UNFUNDED
    assert verdict.details["code"] == "ETH"
    assert verdict.details["needed"] == 21_000 * FEES.max_fee_per_gas
    assert verdict.details["held"] == 0


def test_a_payout_whose_transfer_would_revert_fails_with_the_chains_words_cut_to_300() -> None:
    words = "execution reverted: blacklisted " + "x" * 600
    facts = GivenFacts(asset=USDC, token_held=5000, gas=words)
    verdict = decide(payout("5000", "USDC"), facts)
    assert verdict == Fail(f"the transfer would revert on chain ({words[:300]}); nothing was signed or paid")
    assert len(verdict.reason) <= REASON_LENGTH


def test_a_payout_without_gas_asks_for_a_top_up_of_fifty_such_payouts_at_the_current_fee() -> None:
    facts = GivenFacts(asset=USDC, token_held=5000, native_held=0, gas=TOKEN_GAS)
    verdict = decide(payout("5000", "USDC"), facts)
    # 50 payouts × 65,000 gas × (base fee 10 gwei + tip 1 gwei), not at the doubled maximum.
    assert verdict == TopUp(50 * TOKEN_GAS * 11_000_000_000, FEES, 5000)


def test_a_native_payout_one_wei_short_of_value_and_gas_asks_for_a_top_up() -> None:
    needed = 5000 + 21_000 * FEES.max_fee_per_gas
    facts = GivenFacts(native_held=needed - 1)
    verdict = decide(payout("5000"), facts)
    assert verdict == TopUp(50 * 21_000 * 11_000_000_000, FEES, 5000)


def test_a_native_payout_with_exactly_value_and_gas_is_signed_to_the_destination() -> None:
    needed = 5000 + 21_000 * FEES.max_fee_per_gas
    facts = GivenFacts(native_held=needed)
    verdict = decide(payout("5000"), facts)
    assert verdict == Sign(Call(DESTINATION, 5000, b"", 21_000, FEES), 5000)
    assert verdict.gas_cost == 21_000 * FEES.max_fee_per_gas
    # The estimate was asked for the same call, its gas not known yet.
    assert facts.estimated == [Call(DESTINATION, 5000, b"", 0, FEES)]


def test_a_token_payout_is_signed_as_a_transfer_call_to_the_token_contract_with_no_value() -> None:
    facts = GivenFacts(asset=USDC, token_held=10**9, native_held=10**18, gas=TOKEN_GAS)
    verdict = decide(payout("5000", "USDC"), facts)
    data = token_transfer_data(DESTINATION, 5000)
    assert verdict == Sign(Call(USDC_CONTRACT, 0, data, TOKEN_GAS, FEES), 5000)
    assert facts.estimated == [Call(USDC_CONTRACT, 0, data, 0, FEES)]


def test_every_wait_kind_has_a_positive_delay_and_words_for_the_operator() -> None:
    for kind in WaitKind:
        assert kind.delay.total_seconds() > 0, kind
        assert kind.text.strip(), kind
        assert kind.meaning.strip(), kind


def test_an_unfunded_wait_at_the_longest_column_values_fits_the_payouts_reason() -> None:
    asset = Asset("c" * 32, "T" * 16, "ERC20", 18, 1, USDC_CONTRACT, 1, "production")
    top = 2**256 - 1  # 78 digits: the widest amount column
    verdict = unfunded("payout wallet", WALLET, asset, top, top)
    assert len(verdict.reason) <= REASON_LENGTH


def test_a_stopped_wait_with_a_fencing_reason_of_200_characters_fits_the_payouts_reason() -> None:
    for kind in (WaitKind.SCANNING, WaitKind.FENCED, WaitKind.POOL, WaitKind.NONCE_AHEAD):
        verdict = stopped(kind, "payout", Asset("c" * 32, "ETH", "native", 18, 1, None, 1, "x"), "r" * 200)
        assert verdict.reason.endswith("r" * 200)
        assert len(verdict.reason) <= REASON_LENGTH


def test_every_wait_kinds_text_is_complete_with_the_details_its_callers_give() -> None:
    details = {
        "reason": "r",
        "chain_id": "eth_local",
        "role": "payout wallet",
        "ceiling": 1,
        "address": WALLET,
        "needed": 2,
        "code": "ETH",
        "held": 1,
    }
    for kind in WaitKind:
        reason = wait(kind, **details).reason
        assert "{" not in reason and 0 < len(reason) <= REASON_LENGTH, kind


class Refusing:
    """A fencing whose check refuses with ``error`` (fencing_stop's only use of it)."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def check(self, chain: Any, chain_id: str, wallet: str, role: str) -> int:
        if self.error is not None:
            raise self.error
        return 7


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (Pending("pool"), WaitKind.POOL),
        (Scanning("scanning"), WaitKind.SCANNING),
        (Fenced("fenced"), WaitKind.FENCED),
    ],
)
def test_the_fencings_refusal_becomes_the_payouts_stop_of_the_same_kind(
    error: Exception, kind: WaitKind
) -> None:
    nonce, stop = payout_facts.fencing_stop(Refusing(error), None, "eth_local", WALLET, "payout")  # type: ignore[arg-type]
    assert (nonce, stop) == (0, Stop(kind, str(error)))


def test_a_fencing_that_lets_the_wallet_sign_gives_its_nonce_and_no_stop() -> None:
    assert payout_facts.fencing_stop(Refusing(None), None, "eth_local", WALLET, "payout") == (7, None)  # type: ignore[arg-type]
