"""What a readiness decision answers (payouts.readiness, sweeps.readiness): the words both
share, so that a transaction of either kind is judged in the same terms."""

from __future__ import annotations

import dataclasses
from typing import Any

from appliance.engine.chain.base import FeeQuote
from appliance.engine.outgoing.transactions import Call


@dataclasses.dataclass(frozen=True)
class Wait:
    """Not now: ``kind`` (an enum member of the deciding package) carries its delay or log key and
    its operator-facing text, completed by ``details``."""

    kind: Any
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def reason(self) -> str:
        return str(self.kind.text).format(**self.details)


@dataclasses.dataclass(frozen=True)
class Fail:
    """It can never succeed as it stands: nothing is signed. ``held``: what was there to move."""

    reason: str
    held: int = 0


@dataclasses.dataclass(frozen=True)
class TopUp:
    """The sender lacks gas: the fee wallet sends it ``amount`` wei first (at ``fees``); ``moves``
    is what the transaction waiting for it moves."""

    amount: int
    fees: FeeQuote
    moves: int = 0


@dataclasses.dataclass(frozen=True)
class Sign:
    """Reserve a nonce and sign ``call``, which moves ``amount``."""

    call: Call
    amount: int

    @property
    def gas_cost(self) -> int:
        """The most its gas may cost (gas limit × maxFeePerGas)."""
        return self.call.gas * self.call.fees.max_fee_per_gas
