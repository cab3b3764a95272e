"""What a courier earns (issue 46): the company's pay rule applied to their work, beside the value
of the orders they delivered (which is the shop's money, not their pay).

A rule pays per delivery (each delivered order), per kilometre (the distance of their GPS track:
consecutive fixes at most GAP apart, so a gap with the phone off or a jump is never paid as road)
or per hour (the time their shifts were open), and at least ``minimum_amd`` for each Yerevan day
worked (a delivery, a shift or a tracked kilometre that day). Amounts are whole drams, rounded
half up per day.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.problems import NotFound
from appliance.dispatch import audit
from appliance.dispatch.db import database
from appliance.dispatch.models import CourierLocation, Order, PayRule, Shift

BASES = ("delivery", "km", "hour")
GAP = dt.timedelta(minutes=10)
EARTH_RADIUS_KM = 6371.0088


def rule_body(rule: PayRule | None) -> dict[str, Any] | None:
    if rule is None:
        return None
    return {
        "basis": rule.basis,
        "rateAmd": rule.rate_amd,
        "minimumAmd": rule.minimum_amd,
        "updatedAt": clock.iso(rule.updated_at),
    }


def rule_of(company_id: int) -> PayRule | None:
    return PayRule.get_or_none(PayRule.company == company_id)


def set_rule(company_id: int, actor_id: int, basis: str, rate_amd: int, minimum_amd: int) -> dict[str, Any]:
    with write_transaction(database):
        before = rule_body(rule_of(company_id))
        PayRule.insert(
            company=company_id,
            basis=basis,
            rate_amd=rate_amd,
            minimum_amd=minimum_amd,
            updated_at=clock.now(),
            updated_by_id=actor_id,
        ).on_conflict(
            conflict_target=[PayRule.company],
            update={
                PayRule.basis: basis,
                PayRule.rate_amd: rate_amd,
                PayRule.minimum_amd: minimum_amd,
                PayRule.updated_at: clock.now(),
                PayRule.updated_by_id: actor_id,
            },
        ).execute()
        after = rule_body(rule_of(company_id))
        audit.record(
            "pay_rule.set", f"company:{company_id}", company_id=company_id, before=before, after=after
        )
    return after  # type: ignore[return-value]


def remove_rule(company_id: int) -> None:
    with write_transaction(database):
        before = rule_body(rule_of(company_id))
        if before is None:
            raise NotFound("No pay rule is set.")
        PayRule.delete().where(PayRule.company == company_id).execute()
        audit.record("pay_rule.removed", f"company:{company_id}", company_id=company_id, before=before)


def _day(moment: dt.datetime) -> dt.date:
    return moment.astimezone(clock.YEREVAN).date()


def _km(a: CourierLocation, b: CourierLocation) -> float:
    lat1, lat2 = math.radians(a.lat), math.radians(b.lat)
    dlat, dlon = lat2 - lat1, math.radians(b.lon - a.lon)
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def _units_by_day(
    rule: PayRule, courier_id: int, since: dt.datetime | None, now: dt.datetime
) -> dict[dt.date, float]:
    """{day worked: units paid for} for the days since ``since`` (all when None)."""
    units: dict[dt.date, float] = defaultdict(float)
    worked: set[dt.date] = set()
    delivered = Order.select(Order.finished_at).where(
        (Order.last_courier == courier_id) & (Order.status == "delivered")
    )
    if since is not None:
        delivered = delivered.where(Order.finished_at >= since)
    for order in delivered:
        day = _day(order.finished_at)
        worked.add(day)
        if rule.basis == "delivery":
            units[day] += 1
    shifts = Shift.select().where(Shift.courier == courier_id)
    if since is not None:
        shifts = shifts.where((Shift.ended_at.is_null()) | (Shift.ended_at > since))
    for shift in shifts:
        start = max(shift.started_at, since) if since is not None else shift.started_at
        end = shift.ended_at or now
        if end <= start:
            continue
        day = _day(start)
        worked.add(day)
        if rule.basis == "hour":
            units[day] += (end - start).total_seconds() / 3600
    if rule.basis == "km":
        fixes = CourierLocation.select().where(CourierLocation.courier == courier_id)
        if since is not None:
            fixes = fixes.where(CourierLocation.captured_at >= since)
        previous = None
        for fix in fixes.order_by(CourierLocation.captured_at):
            if previous is not None and fix.captured_at - previous.captured_at <= GAP:
                day = _day(fix.captured_at)
                units[day] += _km(previous, fix)
                worked.add(day)
            previous = fix
    return {day: units.get(day, 0.0) for day in worked}


def _whole(amount: float) -> int:
    return int(Decimal(str(amount)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def pay(rule: PayRule | None, courier_id: int, since: dt.datetime | None) -> dict[str, Any]:
    """``payAmd`` and the units paid for (deliveries, km or hours) since ``since``; nulls without a
    rule."""
    if rule is None:
        return {"payAmd": None, "payUnits": None}
    total = 0
    paid_units = 0.0
    for quantity in _units_by_day(rule, courier_id, since, clock.now()).values():
        total += max(_whole(quantity * rule.rate_amd), rule.minimum_amd)
        paid_units += quantity
    return {"payAmd": total, "payUnits": round(paid_units, 2)}
