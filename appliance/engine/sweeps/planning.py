"""Which deposit addresses have something to sweep, and the least worth sweeping.

A (deposit address, asset) is due when a deposit of it became CONFIRMED after the last sweep of
it was planned (``Sweep.planned_at``: taken before that sweep read the balance, so every deposit
confirmed earlier was in the balance it read) and no sweep of the address is open: an address
sweeps one asset at a time, because its sweeps share its nonces and its native balance (a token's
sweep spends the gas that an open native sweep would take away). Tokens go before the native
asset: a token's transfer may then spend gas the address already holds.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import peewee

from appliance.common import clock
from appliance.engine.chain.base import FeeQuote
from appliance.engine.chain.registry import Asset
from appliance.engine.models import Deposit, DepositAddress, Sweep
from appliance.engine.outgoing.fees import NATIVE_GAS

OPEN = ("topping_up", "signed", "sent")


@dataclasses.dataclass(frozen=True)
class Due:
    deposit_address_id: int
    address: str
    asset_code: str


def due(chain_id: str, native_code: str | None, limit: int) -> list[Due]:
    """(address, asset) pairs to sweep on the chain, at most ``limit`` addresses, tokens first:
    from the whole deposit history (DuePlanner reads it once, then only what confirmed since)."""
    return DuePlanner().due(chain_id, native_code, limit)


# The planner reads the whole deposit history again this often, as a safety net (a deposit whose
# confirmation committed out of order with the cursor); every other pass reads only what
# confirmed since its last look.
FULL_RESCAN = timedelta(minutes=10)


class DuePlanner:
    """Which (address, asset) pairs have a deposit confirmed after their last sweep was planned,
    kept between passes: each pass reads the deposits confirmed since its last look (by
    ``confirmed_at``, indexed with the chain by migration 0022) and the last planned sweep of
    only those pairs, not all deposit history every ``sweep_interval_seconds``."""

    def __init__(self) -> None:
        # chain → (address id, asset) → (address, the latest confirmation seen)
        self.pending: dict[str, dict[tuple[int, str], tuple[str, datetime]]] = {}
        self.cursor: dict[str, datetime] = {}
        self.rescanned: dict[str, datetime] = {}
        self.last_id: dict[str, int] = {}  # the newest deposit id read at the cursor's moment

    def due(self, chain_id: str, native_code: str | None, limit: int) -> list[Due]:
        self._read(chain_id)
        pending = self.pending[chain_id]
        if not pending:
            return []
        planned = _last_planned(chain_id, {a for a, _ in pending})
        busy = _busy(chain_id)
        out: list[Due] = []
        for (address_id, code), (address, confirmed_at) in list(pending.items()):
            last = planned.get((address_id, code))
            if last is not None and confirmed_at <= last:
                del pending[(address_id, code)]  # a sweep planned since covers it
                continue
            if address_id not in busy:
                out.append(Due(address_id, address, code))
        out.sort(key=lambda d: (d.deposit_address_id, d.asset_code == native_code, d.asset_code))
        chosen: dict[int, Due] = {}
        for d in out:  # one asset per address per pass
            chosen.setdefault(d.deposit_address_id, d)
        return list(chosen.values())[:limit]

    def _read(self, chain_id: str) -> None:
        moment = clock.now()
        since = self.cursor.get(chain_id)
        if since is None or moment - self.rescanned.get(chain_id, moment) >= FULL_RESCAN:
            self.pending[chain_id] = {}
            self.rescanned[chain_id] = moment
            since = None
        query = (
            Deposit.select(
                Deposit.id, Deposit.address, DepositAddress.address, Deposit.asset_code, Deposit.confirmed_at
            )
            .join(DepositAddress, on=(Deposit.address == DepositAddress.id))
            .where((Deposit.chain_id == chain_id) & (Deposit.status == "CONFIRMED"))
        )
        last_id = self.last_id.get(chain_id, 0) if since is not None else 0
        if since is not None:
            # One moment may hold several confirmations: those of it already read are passed by id.
            query = query.where(
                (Deposit.confirmed_at > since) | ((Deposit.confirmed_at == since) & (Deposit.id > last_id))
            )
        pending = self.pending.setdefault(chain_id, {})
        newest = since
        for deposit_id, address_id, address, code, confirmed_at in query.tuples():
            if confirmed_at is None:
                continue
            at = _as_datetime(confirmed_at)
            key = (int(address_id), code)
            if key not in pending or pending[key][1] < at:
                pending[key] = (address, at)
            if newest is None or at > newest:
                newest, last_id = at, int(deposit_id)
            elif at == newest:
                last_id = max(last_id, int(deposit_id))
        self.cursor[chain_id] = newest if newest is not None else moment - FULL_RESCAN
        self.last_id[chain_id] = last_id


def _last_planned(chain_id: str, address_ids: set[int]) -> dict[tuple[int, str], datetime]:
    out: dict[tuple[int, str], datetime] = {}
    ids = sorted(address_ids)
    for start in range(0, len(ids), 500):
        for a, code, at in (
            Sweep.select(Sweep.deposit_address, Sweep.asset_code, peewee.fn.MAX(Sweep.planned_at))
            .where((Sweep.chain_id == chain_id) & Sweep.deposit_address.in_(ids[start : start + 500]))
            .group_by(Sweep.deposit_address, Sweep.asset_code)
            .tuples()
        ):
            out[(int(a), code)] = _as_datetime(at)
    return out


def skipped(chain_id: str, code: str, least: int, exclude: set[int], limit: int) -> list[Due]:
    """(address, asset) pairs whose latest sweep of the asset was skipped holding more than
    ``least`` (the minimum at today's fee) and no sweep of the address is open: dust that a
    higher fee made not worth its sweep, worth it now (the sweep job asks only when the fee has
    fallen, so this runs only then)."""
    latest = (
        Sweep.select(peewee.fn.MAX(Sweep.id))
        .where((Sweep.chain_id == chain_id) & (Sweep.asset_code == code))
        .group_by(Sweep.deposit_address)
    )
    busy = _busy(chain_id)
    rows = (
        Sweep.select(Sweep.deposit_address, Sweep.address, Sweep.amount_minor)
        .where(Sweep.id.in_(latest) & (Sweep.status == "skipped"))
        .order_by(Sweep.deposit_address)
        .tuples()
    )
    out = []
    for address_id, address, held in rows:
        if int(address_id) in busy or int(address_id) in exclude or int(held or 0) <= least:
            continue
        out.append(Due(int(address_id), address, code))
        if len(out) >= limit:
            break
    return out


def _as_datetime(value: object) -> datetime:
    # MAX() over a UTCDateTimeField comes back as the stored text on SQLite.
    if isinstance(value, datetime):
        return value
    from appliance.common.db import UTCDateTimeField

    return UTCDateTimeField().python_value(value)  # type: ignore[no-any-return]


def minimum(asset: Asset, fees: FeeQuote | None) -> int:
    """The balance a sweep must exceed: the asset's sweep_min_minor; by default, for the native
    asset, the sweep's own fee at the quoted maximum (a smaller sweep would mostly pay the network),
    and for a token nothing (its fee is paid in the native asset, whose price in the token the
    engine does not know)."""
    if asset.sweep_min_minor is not None:
        return asset.sweep_min_minor
    if asset.kind == "native":
        return NATIVE_GAS * (fees.max_fee_per_gas if fees is not None else 0)
    return 0


def unswept_deposits(
    chain_id: str, confirmed_before: datetime
) -> list[tuple[tuple[str, str], datetime, int]]:
    """((address, asset code), oldest confirmation, total) of CONFIRMED deposits confirmed before
    ``confirmed_before`` that no sweep covers: none of the address and asset planned after the
    deposit was confirmed, and no sweep of the address open (in flight, it covers them)."""
    planned: dict[tuple[int, str], datetime] = {
        (int(a), code): _as_datetime(at)
        for a, code, at in Sweep.select(
            Sweep.deposit_address, Sweep.asset_code, peewee.fn.MAX(Sweep.planned_at)
        )
        .where((Sweep.chain_id == chain_id) & (Sweep.status != "skipped"))
        .group_by(Sweep.deposit_address, Sweep.asset_code)
        .tuples()
    }
    busy = _busy(chain_id)
    rows = (
        Deposit.select(
            Deposit.address,
            DepositAddress.address,
            Deposit.asset_code,
            Deposit.amount_minor,
            Deposit.confirmed_at,
        )
        .join(DepositAddress, on=(Deposit.address == DepositAddress.id))
        .where(
            (Deposit.chain_id == chain_id)
            & (Deposit.status == "CONFIRMED")
            & (Deposit.confirmed_at <= confirmed_before)
        )
        .tuples()
    )
    oldest: dict[tuple[str, str], datetime] = {}
    totals: dict[tuple[str, str], int] = {}
    for address_id, address, code, amount, confirmed_at in rows:
        if int(address_id) in busy or confirmed_at is None:
            continue
        last = planned.get((int(address_id), code))
        if last is not None and last >= confirmed_at:
            continue
        key = (address, code)
        totals[key] = totals.get(key, 0) + int(amount)
        if key not in oldest or confirmed_at < oldest[key]:
            oldest[key] = confirmed_at
    return [(key, oldest[key], totals[key]) for key in sorted(oldest)]


def _busy(chain_id: str) -> set[int]:
    """Deposit addresses with a sweep open on the chain (one asset at a time per address)."""
    return {
        int(a)
        for (a,) in Sweep.select(Sweep.deposit_address)
        .where((Sweep.chain_id == chain_id) & Sweep.status.in_(OPEN))
        .tuples()
    }
