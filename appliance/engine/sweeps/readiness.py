"""Whether a sweep can be signed now: pure decisions over facts read apart (sweeps.facts), as
payouts.readiness decides for a payout.

- ``decide_native``: a native balance is swept whole, less its own fee, or skipped below the least
  worth sweeping;
- ``decide_token``: a token balance is swept once the address holds the gas of its transfer;
  otherwise the fee wallet tops that gas up first; a transfer that would revert is not signed;
- ``decide_after_topup``: once the top-up is final, the transfer is signed from what the address
  holds (at a lower fee if the market rose since, when the block still takes it) or waits.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Protocol

from appliance.engine.chain.base import FeeQuote
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing.transactions import Call
from appliance.engine.outgoing.verdicts import Fail, Sign, TopUp, Wait


class WaitKind(enum.Enum):
    """Why a sweep (or every sweep of a chain) waits: its key (a wait is logged once) and its text."""

    ABOVE_CEILING = ("ceiling", "sweeps on %s wait: the fee is above max_fee_per_gas")
    FEE_RISEN = ("gas", "sweep of %s waits for the fee to fall")
    FEE_WALLET_UNFUNDED = (
        "unfunded",
        "sweeps on %s wait: the fee wallet %s holds less than the %s wei a gas top-up needs",
    )
    FENCED = ("fenced", "sweeps: %s waits: %s")
    NONCE_AHEAD = ("ahead", "sweeps: %s waits: %s")

    def __init__(self, key: str, text: str) -> None:
        self.key = key
        self.text = text


__all__ = ["Fail", "Sign", "Skip", "TopUp", "Wait", "WaitKind"]


@dataclasses.dataclass(frozen=True)
class Skip:
    """Not worth sweeping: recorded as a skipped sweep of ``held``."""

    reason: str
    held: int


class TokenFacts(Protocol):
    """What a token sweep is judged by; each is read when the decision first needs it."""

    @property
    def held(self) -> int: ...  # the address's token balance
    @property
    def transfer(self) -> tuple[int, bytes, int] | str: ...  # (balance, data, gas), or why it reverts
    @property
    def gas_held(self) -> int: ...  # the address's native balance
    @property
    def fees(self) -> FeeQuote | None: ...  # the market's under the ceiling, read now


def decide_native(balance: int, least: int, fees: FeeQuote, payout_wallet: str) -> Skip | Sign:
    value = balance - fee_rules.NATIVE_GAS * fees.max_fee_per_gas
    if balance <= least or value <= 0:
        reason = (
            f"holds {balance}, not above the minimum of {least} (sweep_min_minor, or the sweep's own fee)"
        )
        return Skip(reason, balance)
    return Sign(Call(payout_wallet, value, b"", fee_rules.NATIVE_GAS, fees), value)


def decide_token(facts: TokenFacts, least: int, fees: FeeQuote, contract: str) -> Skip | Fail | TopUp | Sign:
    held = facts.held
    if held <= least:
        return Skip(f"holds {held}, not above the minimum of {least} (sweep_min_minor)", held)
    transfer = facts.transfer
    if isinstance(transfer, str):
        return Fail(transfer, held)
    held, data, gas = transfer
    needed = gas * fees.max_fee_per_gas
    has = facts.gas_held
    if has < needed:
        return TopUp(needed - has, fees, held)
    # The address holds the gas already (a native deposit, an earlier top-up).
    return Sign(Call(contract, 0, data, gas, fees), held)


def decide_after_topup(facts: TokenFacts, contract: str) -> Fail | Wait | Sign:
    transfer = facts.transfer
    if isinstance(transfer, str):
        return Fail(transfer)
    held, data, gas = transfer
    if held <= 0:
        return Fail("the address holds none of the token any more")
    has = facts.gas_held
    fees = facts.fees
    if fees is not None:
        # The fee may have risen since the top-up: offer what the address holds, if the block takes it.
        fees = fee_rules.within(fees, gas, has)
    if fees is None:
        return Wait(WaitKind.FEE_RISEN)
    return Sign(Call(contract, 0, data, gas, fees), held)
