"""Arrival estimates: a courier's open stops in run order, timed on the roads from the last GPS fix
(else the company's default depot), with a service time at each stop. Public tracking reuses
``courier_eta``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.dispatch.couriers.lookups import latest_location
from appliance.dispatch.db import database
from appliance.dispatch.models import Courier, Depot, Order
from appliance.dispatch.orders.statuses import ACTIVE
from appliance.dispatch.routing.engines import Point, Router
from appliance.dispatch.routing.memo import RouteMemo

SERVICE_SECONDS = 5 * 60  # minutes spent at each stop before driving on
YEREVAN_CENTRE = (40.1792, 44.4991)
OPEN = tuple(ACTIVE)  # the stops an estimate counts

# Estimates are asked for on every tracking view and board refresh: their queries are compiled.
_DEFAULT_DEPOT = CompiledSelect(
    lambda: Depot.select().where((Depot.company == Slot("company_id")) & Depot.is_default).limit(1)
)
_RUN_ORDERS = CompiledSelect(
    lambda: (
        Order.select()
        .where((Order.courier == Slot("courier_id")) & Order.status.in_(OPEN))
        .order_by(Order.sequence.asc(nulls="LAST"), Order.id)
    )
)


def courier_origin(courier: Courier, max_fix_age: timedelta | None = None) -> dict[str, Any] | None:
    """The last GPS fix when it is fresh (not older than ``max_fix_age``), else the default depot,
    saying so (``staleFixAt`` names the fix that was too old); None when neither exists."""
    fix = latest_location(courier.id)
    stale_at = None
    if fix is not None:
        if max_fix_age is None or clock.now() - fix.captured_at <= max_fix_age:
            return {"lat": fix.lat, "lon": fix.lon, "source": "gps", "capturedAt": clock.iso(fix.captured_at)}
        stale_at = clock.iso(fix.captured_at)
    depot = _DEFAULT_DEPOT.first(database, company_id=courier.company_id)
    if depot is not None:
        origin = {"lat": depot.lat, "lon": depot.lon, "source": "depot", "capturedAt": None}
        if stale_at:
            origin["staleFixAt"] = stale_at
        return origin
    return None


def run_orders(courier: Courier) -> list[Order]:
    return _RUN_ORDERS.all(database, courier_id=courier.id)


def time_sequence(
    router: Router | RouteMemo, start: Point, stops: list[Point], service_seconds: int
) -> tuple[list[int], int, str]:
    """Seconds from now to each stop along the given order (service time at the earlier stops)."""
    if not stops:
        return [], 0, "road" if router.engine is not None else "straight_line"
    result = router.route([start, *stops])
    arrivals = []
    elapsed = 0.0
    for index, (duration, _distance) in enumerate(result.legs):
        if index:
            elapsed += service_seconds
        elapsed += duration
        arrivals.append(round(elapsed))
    total = round(elapsed + service_seconds)
    return arrivals, total, result.method


def courier_eta(
    router: Router | RouteMemo,
    courier: Courier,
    *,
    service_seconds: int = SERVICE_SECONDS,
    max_fix_age: timedelta | None = None,
) -> dict[str, Any]:
    origin = courier_origin(courier, max_fix_age)
    orders = run_orders(courier)
    now = clock.now()
    etas: list[int | None] = [None] * len(orders)
    method = "road" if router.engine is not None else "straight_line"
    if origin is not None and orders:
        arrivals, _total, method = time_sequence(
            router, (origin["lat"], origin["lon"]), [(o.lat, o.lon) for o in orders], service_seconds
        )
        etas = list(arrivals)
    return {
        "courierId": str(courier.id),
        "origin": origin,
        "method": method,
        "computedAt": clock.iso(now),
        "stops": [
            {
                "orderId": str(o.id),
                "publicId": o.public_id,
                "sequence": o.sequence,
                "status": o.status,
                "etaSeconds": eta,
                "eta": clock.iso(now + timedelta(seconds=eta)) if eta is not None else None,
            }
            for o, eta in zip(orders, etas, strict=True)
        ],
    }
