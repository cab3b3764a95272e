"""Arrival estimates: a courier's open stops in run order, timed on the roads from the last GPS fix
(else the company's default depot), with a service time at each stop; the expected hand-over
times also count the waits for delivery windows, as the planner does. Public tracking reuses
``courier_eta``."""

from __future__ import annotations

from datetime import datetime, timedelta
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


def leg_seconds(router: Router | RouteMemo, start: Point, stops: list[Point]) -> tuple[list[float], str]:
    """The driving seconds of each leg, start to the first stop then stop to stop, and the method."""
    if not stops:
        return [], "road" if router.engine is not None else "straight_line"
    result = router.route([start, *stops])
    return [duration for duration, _distance in result.legs], result.method


def road_times(legs: list[float], service_seconds: int) -> tuple[list[int], int]:
    """Seconds from the start to each stop (the drive and the service at the earlier stops, no
    waits: the specification's ``etaSeconds``) and to the end of the last stop's service."""
    if not legs:
        return [], 0
    arrivals = []
    elapsed = 0.0
    for index, duration in enumerate(legs):
        if index:
            elapsed += service_seconds
        elapsed += duration
        arrivals.append(round(elapsed))
    return arrivals, round(elapsed + service_seconds)


def time_sequence(
    router: Router | RouteMemo, start: Point, stops: list[Point], service_seconds: int
) -> tuple[list[int], int, str]:
    """Seconds from now to each stop along the given order (service time at the earlier stops)."""
    legs, method = leg_seconds(router, start, stops)
    arrivals, total = road_times(legs, service_seconds)
    return arrivals, total, method


def expected_sequence(legs: list[float], service_seconds: int, opens: list[float | None]) -> list[int]:
    """Seconds from the start to the moment the courier hands over at each stop, timed as the
    planner times a route (planning/solver.py's arrivals): the drive, the service at the earlier
    stops, and a wait wherever the courier arrives before the stop's window opens (``opens``: its
    seconds from the start, None without a window), a wait that delays every later stop. The road
    estimate (``time_sequence``, the specification's ``etaSeconds``) counts no waits."""
    expected: list[int] = []
    ready = 0.0
    for index, (duration, opening) in enumerate(zip(legs, opens, strict=True)):
        if index:
            ready += service_seconds
        ready += duration
        if opening is not None and ready < opening:
            ready = opening
        expected.append(round(ready))
    return expected


def seconds_until(start: datetime, moment: datetime | None) -> float | None:
    return None if moment is None else (moment - start).total_seconds()


def courier_eta(
    router: Router | RouteMemo,
    courier: Courier,
    *,
    service_seconds: int = SERVICE_SECONDS,
    max_fix_age: timedelta | None = None,
) -> dict[str, Any]:
    """The specification's Eta, each stop also saying ``expectedAt`` (beyond the specification's
    fields): when the courier is expected to hand over, counting the waits for windows at this and
    the earlier stops (``expected_sequence``); ``etaSeconds`` and ``eta`` stay the road estimate."""
    origin = courier_origin(courier, max_fix_age)
    orders = run_orders(courier)
    now = clock.now()
    etas: list[int | None] = [None] * len(orders)
    expected: list[int | None] = [None] * len(orders)
    method = "road" if router.engine is not None else "straight_line"
    if origin is not None and orders:
        legs, method = leg_seconds(router, (origin["lat"], origin["lon"]), [(o.lat, o.lon) for o in orders])
        etas = list(road_times(legs, service_seconds)[0])
        opens = [seconds_until(now, o.window_start) for o in orders]
        expected = list(expected_sequence(legs, service_seconds, opens))
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
                "expectedAt": clock.iso(now + timedelta(seconds=due)) if due is not None else None,
            }
            for o, eta, due in zip(orders, etas, expected, strict=True)
        ],
    }
