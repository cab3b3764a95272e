"""Solvency per asset: what the operators are owed against what custody holds (docs/
engine-treasury.md, "Solvency").

- owed: the operators' available balances that are above zero (an ``unlimited`` operator's
  balance below zero is no claim: it is that operator's exposure) plus the payouts in flight
  whose transaction has not landed (reserved out of the balance, still to leave custody);
- held: what the custody addresses hold on chain now: the payout wallet, the fee wallet and every
  deposit address;
- shortfall: owed less held when positive: a critical ``solvency_shortfall`` finding;
- deployment costs: the deployment's own ledger account (ledger/deployment.py): sweep fees and
  other costs that belong to no operator, the part of a gap that the deployment spent;
- exposures: each ``unlimited`` operator whose balance is below zero (it paid out, or reserved,
  more than it deposited or was credited: the pooled deposits of others paid for it), with the
  ceiling its controls set (``appliance operator set-limits … --exposure-ceiling``).

Reading every operator's balance row per asset is bounded by operators × assets, not history.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from appliance.engine.ledger import book, deployment
from appliance.engine.ledger.controls import PREFUNDED
from appliance.engine.ledger.models import LedgerAccount, OperatorControl, OperatorLimit
from appliance.engine.models import Broadcast, Payout, SignedPayload
from appliance.engine.treasury.positions import Position


@dataclasses.dataclass
class AssetSolvency:
    chain_id: str
    asset_code: str
    owed: int = 0
    in_flight: int = 0
    held: int = 0
    costs: int = 0
    exposures: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    @property
    def shortfall(self) -> int:
        return max(0, self.owed - self.held)

    def body(self) -> dict[str, Any]:
        return {
            "chainId": self.chain_id,
            "assetCode": self.asset_code,
            "owedMinor": str(self.owed),
            "inFlightMinor": str(self.in_flight),
            "heldMinor": str(self.held),
            "shortfallMinor": str(self.shortfall),
            "deploymentCostsMinor": str(self.costs),
            "exposures": self.exposures,
        }


def exposures(chain_id: str) -> dict[str, list[dict[str, Any]]]:
    """Asset code → the ``unlimited`` operators whose available balance is below zero."""
    prefunded = {
        str(o)
        for (o,) in OperatorControl.select(OperatorControl.operator)
        .where(OperatorControl.ledger_mode == PREFUNDED)
        .tuples()
    }
    ceilings = {
        (str(o), code): c
        for o, code, c in OperatorLimit.select(
            OperatorLimit.operator, OperatorLimit.asset_code, OperatorLimit.exposure_ceiling_minor
        )
        .where(OperatorLimit.chain_id == chain_id)
        .tuples()
    }
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        LedgerAccount.select(LedgerAccount.operator, LedgerAccount.asset_code, LedgerAccount.balance_minor)
        .where((LedgerAccount.chain_id == chain_id) & (LedgerAccount.account == book.BALANCE))
        .order_by(LedgerAccount.operator, LedgerAccount.asset_code)
        .tuples()
    )
    for operator, code, balance in rows:
        if int(balance) < 0 and str(operator) not in prefunded:
            out[code].append(
                {
                    "operatorId": str(operator),
                    "exposureMinor": str(-int(balance)),
                    "ceilingMinor": ceilings.get((str(operator), code)),
                }
            )
    return out


def chain_solvency(
    chain_id: str, codes: Iterable[str], positions: list[Position], landed: set[int]
) -> list[AssetSolvency]:
    """The solvency of each asset of the chain, from the custody positions read at the head and
    the ids of in-flight payouts whose transaction has landed (they left custody already)."""
    out = {code: AssetSolvency(chain_id, code) for code in codes}
    for p in positions:
        if p.asset_code in out:
            out[p.asset_code].held += p.on_chain
    for code, balance in (
        LedgerAccount.select(LedgerAccount.asset_code, LedgerAccount.balance_minor)
        .where((LedgerAccount.chain_id == chain_id) & (LedgerAccount.account == book.BALANCE))
        .tuples()
    ):
        if code in out and int(balance) > 0:
            out[code].owed += int(balance)
    for payout_id, code, amount in in_flight(chain_id):
        if code in out and payout_id not in landed:
            out[code].owed += amount
            out[code].in_flight += amount
    costs = deployment.costs()
    for code, rows in exposures(chain_id).items():
        if code in out:
            out[code].exposures = rows
    for code, item in out.items():
        item.costs = costs.get((chain_id, code), 0)
    return list(out.values())


def in_flight(chain_id: str) -> list[tuple[int, str, int]]:
    """(payout id, asset, amount) of payouts reserved (SIGNED, BROADCAST) whose reservation is not
    mined yet: their amount left the operator's balance and not yet custody."""
    mined = Broadcast.select(Broadcast.payout).where(
        Broadcast.payout.is_null(False) & Broadcast.status.in_(("mined", "final"))
    )
    rows = Payout.select(Payout.id, Payout.asset, Payout.amount_minor).where(
        (Payout.chain_id == chain_id) & Payout.status.in_(("SIGNED", "BROADCAST")) & ~(Payout.id.in_(mined))
    )
    return [(int(i), code, int(amount)) for i, code, amount in rows.tuples()]


def landed_payouts(chain_id: str, reader: Any) -> set[int]:
    """Ids of in-flight payouts one of whose payloads has a receipt now (the payout pipeline has
    not recorded it yet): custody no longer holds their amount."""
    ids = [i for i, _, _ in in_flight(chain_id)]
    if not ids:
        return set()
    payloads: dict[str, int] = {}
    query = (
        SignedPayload.select(SignedPayload.tx_hash, Broadcast.payout)
        .join(Broadcast, on=(SignedPayload.broadcast == Broadcast.id))
        .where(Broadcast.payout.in_(ids))
        .tuples()
    )
    for tx_hash, payout in query:
        payloads[tx_hash] = int(payout)
    receipts = reader.receipts(payloads)
    return {payloads[h] for h, r in receipts.items() if r}


def all_exposures(chain_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Every chain's ``unlimited`` operators' exposures (for `appliance treasury`)."""
    out: list[dict[str, Any]] = []
    for chain_id in sorted(chain_ids):
        for code, rows in sorted(exposures(chain_id).items()):
            out += [{"chainId": chain_id, "assetCode": code, **row} for row in rows]
    return out
