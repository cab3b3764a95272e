"""The least gas a call succeeds with on the embedded chain, searched within a budget.

py-evm's own estimator searches up to the block's 30 M gas whatever the call asks: a dozen runs
of up to 30 M each. A payout to a contract that burns whatever gas it gets then held the engine's
worker (and the local RPC's caller) for minutes. Both use this search instead: it starts from what
the call used with all the gas it may have (its own, or the cap), and stops once the runs have
spent ``ESTIMATE_BUDGET`` times the cap."""

from __future__ import annotations

from typing import Any, cast

from eth.abc import SignedTransactionAPI
from eth.vm.spoof import SpoofTransaction

ESTIMATE_BUDGET = 2
ESTIMATE_PRECISION = 0.015  # geth's: an estimate within 1.5 % of the least gas that succeeds


class EstimateFailed(Exception):
    """The call cannot succeed: it reverts, or runs out of the gas it may have."""

    def __init__(self, message: str, *, out_of_gas: bool) -> None:
        super().__init__(message)
        self.out_of_gas = out_of_gas


def least_gas(state: Any, spoof: SpoofTransaction, gas_cap: int) -> int:
    """The least gas ``spoof`` (its gas: the most it may have) succeeds with, to
    ESTIMATE_PRECISION, inside ``state`` (a costless state: every run is reverted)."""
    high = int(spoof.gas)
    budget = ESTIMATE_BUDGET * gas_cap
    spent = 0

    def succeeds(gas: int) -> tuple[bool, int, Any]:
        nonlocal spent
        snapshot = state.snapshot()
        try:
            # A spoof of the spoof (as py-evm's own estimator does): the sender kept, the gas set.
            probe = SpoofTransaction(cast(SignedTransactionAPI, spoof), gas=gas, gas_price=0)
            computation = state.apply_transaction(cast(SignedTransactionAPI, probe))
        except Exception as exc:
            raise EstimateFailed(f"execution reverted: {exc}", out_of_gas=False) from None
        finally:
            state.revert(snapshot)
        used = gas - computation.get_gas_remaining()
        spent += used
        return not computation.is_error, used, computation

    ok, used, computation = succeeds(high)
    if not ok:
        if "out of gas" in str(computation.error).lower():
            raise EstimateFailed(f"gas required exceeds allowance ({high})", out_of_gas=True)
        raise EstimateFailed(f"execution reverted: {computation.error}", out_of_gas=False)
    # Most calls (a plain transfer: 21,000) need just what they used.
    if used < high and spent + used <= budget and succeeds(used)[0]:
        return used
    low = max(used - 1, 0)  # below what it used, it cannot succeed
    optimistic = (used + computation.get_gas_refund() + 2300) * 64 // 63
    if optimistic < high and spent + optimistic <= budget:
        if succeeds(optimistic)[0]:
            high = optimistic
        else:
            low = optimistic
    while high - low > 1 and (high - low) / high > ESTIMATE_PRECISION and spent + high <= budget:
        middle = (low + high) // 2
        if succeeds(middle)[0]:
            high = middle
        else:
            low = middle
    return high
