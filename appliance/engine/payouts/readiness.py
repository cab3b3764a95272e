"""Whether a REQUESTED payout can be signed now: a pure decision over facts read apart
(payouts.facts), in the manner of signer.policy and signer.facts.

``decide`` answers one of:
- Wait(kind): not now; the payout stays REQUESTED, holding no nonce, with the kind's text on its
  detail, and is looked at again after the kind's delay;
- Fail(reason): it can never succeed as it stands (the transfer reverts): FAILED, nothing signed;
- TopUp: the payout wallet lacks gas: the fee wallet tops it up first;
- Sign: reserve a nonce and sign this call (the pipeline checks the funds and the operator's
  controls again under the wallet's lock);
- Adopted: it is no longer REQUESTED once the fencing has looked (an administrator adopted a
  transaction found on chain for it, `appliance payout adopt`): nothing more to do here.

The facts are asked for in the order of the questions: a payout its operator's controls hold
costs no chain call, and gas is estimated only once the funds are known to be there (an estimate
of a transfer the wallet cannot make reverts).
"""

from __future__ import annotations

import dataclasses
import enum
from datetime import timedelta
from typing import Any, Protocol

from appliance.engine.chain.base import FeeQuote
from appliance.engine.chain.registry import Asset
from appliance.engine.models import Payout
from appliance.engine.outgoing import fees as fee_rules
from appliance.engine.outgoing import topups
from appliance.engine.outgoing.transactions import Call, erc20_transfer_data
from appliance.engine.outgoing.verdicts import Fail, Sign, TopUp, Wait

REASON_LENGTH = 500  # payout.reason's column
_STOPPED = "signing for the {role} wallet on {chain_id} is stopped: {reason}"
_TOPUP = "waiting for the fee wallet's gas top-up of the payout wallet"


class WaitKind(enum.Enum):
    """Why a payout waits: (seconds until it is looked at again, its text on the payout's detail,
    what it means)."""

    CUSTODY = (5, "{reason}", "no custody key here, or one that is not the deployment's")
    NOT_CONFIGURED = (30, "chain {chain_id} is not configured on this deployment", "unknown chain")
    HELD = (2, "{reason}", "the operator's controls hold it (a pause, an approval, a limit)")
    # Each pass reads the next blocks of the wallet's history (fencing.SCAN_BLOCKS).
    SCANNING = (1, _STOPPED, "the nonce fencing is matching the wallet's history")
    FENCED = (30, _STOPPED, "the nonce fencing stopped signing for the wallet")
    POOL = (5, _STOPPED, "the node's pool holds the wallet's transactions at nonces not reserved here")
    NONCE_AHEAD = (2, _STOPPED, "the chain's nonce moved since the fencing looked")
    ABOVE_CEILING = (
        15,
        "the network fee on {chain_id} is above its max_fee_per_gas ({ceiling} wei per gas); the payout "
        "waits, holding no nonce, until the fee falls under it",
        "the fee is above the chain's ceiling",
    )
    UNFUNDED = (
        2,
        "{role} {address} is unfunded: needs {needed} minor units of {code} on {chain_id}, holds "
        "{held} available; the payout waits and proceeds once it is funded",
        "a wallet lacks the asset or its gas",
    )
    TOPUP_PENDING = (2, _TOPUP, "a gas top-up of the payout wallet is on its way")
    TOPUP_SIGNED = (2, _TOPUP, "the gas top-up this payout asked for was just signed")
    TOPUP_NOT_SIGNED = (30, "gas top-up not signed: {reason}", "the signer refused the top-up")
    NOT_SIGNED = (5, "not signed: {reason}", "the signer refused it or does not answer")
    UNDER_LOCK = (2, "{reason}", "funds or controls changed before the reservation")

    def __init__(self, seconds: int, text: str, meaning: str) -> None:
        self.delay = timedelta(seconds=seconds)
        self.text = text
        self.meaning = meaning


def wait(kind: WaitKind, **details: Any) -> Wait:
    return Wait(kind, details)


__all__ = ["Adopted", "Fail", "Sign", "TopUp", "Wait", "WaitKind", "decide", "wait"]


def unfunded(role: str, address: str, asset: Asset, needed: int, held: int) -> Wait:
    return wait(
        WaitKind.UNFUNDED,
        role=role,
        address=address,
        needed=needed,
        code=asset.code,
        chain_id=asset.chain_id,
        held=max(held, 0),
    )


@dataclasses.dataclass(frozen=True)
class Adopted:
    """The payout moved while the fencing looked (adopted for a transaction found on chain)."""


Verdict = Wait | Fail | TopUp | Sign | Adopted


@dataclasses.dataclass(frozen=True)
class Stop:
    """The fencing's answer for a wallet: still scanning its history (SCANNING), or fenced."""

    kind: WaitKind
    reason: str


def stopped(kind: WaitKind, role: str, asset: Asset, reason: str) -> Wait:
    """Signing for the ``role`` wallet on the asset's chain is stopped (or must look again)."""
    return wait(kind, role=role, chain_id=asset.chain_id, reason=reason)


class Facts(Protocol):
    """What the decision reads; each is read (once) when the decision first needs it."""

    @property
    def custody_missing(self) -> str | None: ...
    @property
    def asset(self) -> Asset | None: ...  # None: the chain is not configured here
    @property
    def native(self) -> Asset: ...
    @property
    def hold(self) -> str | None: ...  # the operator's controls, without the fee
    @property
    def wallet(self) -> str: ...
    @property
    def stop(self) -> Stop | None: ...  # the fencing of the payout wallet (reads the head first)
    @property
    def still_requested(self) -> bool: ...  # not adopted by the fencing meanwhile
    @property
    def fees(self) -> FeeQuote | None: ...  # the market's under the ceiling; None: above it
    @property
    def ceiling(self) -> int | None: ...
    @property
    def token_held(self) -> int: ...  # the wallet's token balance less what is in flight
    @property
    def native_held(self) -> int: ...  # its native balance less what is in flight, with gas
    def gas(self, call: Call) -> int | str: ...  # the gas of the call (margin included), or why it reverts


def payout_call(payout: Payout, asset: Asset, fees: FeeQuote) -> Call:
    """The payout's transfer, gas not known yet (0)."""
    amount = int(payout.amount_minor)
    if asset.kind == "native":
        return Call(payout.destination, amount, b"", 0, fees)
    return Call(asset.contract or "", 0, erc20_transfer_data(payout.destination, amount), 0, fees)


def decide(payout: Payout, facts: Facts) -> Verdict:
    if facts.custody_missing is not None:
        return wait(WaitKind.CUSTODY, reason=facts.custody_missing)
    asset = facts.asset
    if asset is None:
        return wait(WaitKind.NOT_CONFIGURED, chain_id=payout.chain_id)
    if facts.hold is not None:
        return wait(WaitKind.HELD, reason=facts.hold)
    # Fencing first, before funds: a restored copy finds what another copy already paid (and
    # marks it) even when the wallet is empty now.
    if (stop := facts.stop) is not None:
        return stopped(stop.kind, "payout", asset, stop.reason)
    if not facts.still_requested:
        return Adopted()
    fees = facts.fees
    if fees is None:
        return wait(WaitKind.ABOVE_CEILING, chain_id=asset.chain_id, ceiling=facts.ceiling)
    amount = int(payout.amount_minor)
    call = payout_call(payout, asset, fees)
    if asset.kind != "native" and facts.token_held < amount:
        return unfunded("payout wallet", facts.wallet, asset, amount, facts.token_held)
    native_held = facts.native_held
    if native_held < call.value:
        needed = call.value + fee_rules.NATIVE_GAS * fees.max_fee_per_gas
        return unfunded("payout wallet", facts.wallet, facts.native, needed, native_held)
    gas = facts.gas(call)
    if isinstance(gas, str):
        return Fail(f"the transfer would revert on chain ({gas[:300]}); nothing was signed or paid")
    gas_cost = gas * fees.max_fee_per_gas
    if native_held < call.value + gas_cost:
        shortfall = call.value + gas_cost - native_held
        return TopUp(topups.payout_topup_amount(gas, fees, shortfall), fees, amount)
    return Sign(dataclasses.replace(call, gas=gas), amount)
