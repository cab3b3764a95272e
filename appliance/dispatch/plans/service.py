"""Plan rules: the solver's suggestion over ready orders and active couriers, re-timing a given
sequence without reordering it, moving one stop, and applying a plan atomically."""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import peewee

from appliance.common import clock
from appliance.common.problems import BadGateway, Invalid, NotFound
from appliance.dispatch.couriers.lookups import latest_location, open_shift
from appliance.dispatch.eta.service import YEREVAN_CENTRE, time_sequence
from appliance.dispatch.models import Courier, Depot, Order
from appliance.dispatch.orders.service import assign_orders
from appliance.dispatch.orders.state import ACTIVE
from appliance.dispatch.planning.solver import (
    HORIZON_MAX,
    Problem,
    Solution,
    SolverFailed,
    Stop,
    Vehicle,
    solve,
)
from appliance.dispatch.routing.engines import DurationMatrix, Router
from appliance.settings import Settings

MAX_ROUTES = 20
MAX_SUGGEST_ORDERS = 1000
# When reading and the travel matrix used up the budget, the solver still gets this long: enough
# for a first answer on 1,000 stops, and an answer slightly late beats none.
MIN_SOLVER_SECONDS = 0.1


def _refuse_duplicates(ids: list[int] | None, field: str, what: str) -> None:
    if ids is not None and len(set(ids)) != len(ids):
        raise Invalid(
            f"The same {what} is listed twice.", errors=[{"field": field, "message": f"duplicate {what}"}]
        )


def _start(courier: Courier, depot: Depot | None, max_fix_age: timedelta | None = None) -> dict[str, Any]:
    """Where a courier's lane starts: the last GPS fix while it is fresh (not older than
    ``max_fix_age``: last night's fix at home is no start), else the default depot."""
    fix = latest_location(courier.id)
    if fix is not None and (max_fix_age is None or clock.now() - fix.captured_at <= max_fix_age):
        return {"lat": fix.lat, "lon": fix.lon, "source": "gps"}
    if depot is not None:
        return {"lat": depot.lat, "lon": depot.lon, "source": "depot"}
    return {"lat": YEREVAN_CENTRE[0], "lon": YEREVAN_CENTRE[1], "source": "city_centre"}


def _default_depot(company_id: int) -> Depot | None:
    return Depot.get_or_none((Depot.company == company_id) & Depot.is_default)


def _seconds_from(now: datetime, moment: datetime | None, default: int) -> int:
    if moment is None:
        return default
    return max(0, min(HORIZON_MAX, int((moment - now).total_seconds())))


@dataclasses.dataclass
class _Candidates:
    """What a suggestion plans: ready orders (oldest first, up to the bound) and active couriers,
    with the ids it lists as unassigned without planning them."""

    orders: list[Order]
    couriers: list[Courier]
    skipped: list[str]
    held: list[int]  # open orders each courier already holds (they use capacity)


def suggest(
    router: Router,
    settings: Settings,
    company_id: int,
    order_ids: list[int] | None,
    courier_ids: list[int] | None,
    capacity: int,
    service_minutes: float,
    shift_hours: float,
    on_shift: bool = True,
) -> dict[str, Any]:
    """The solver's routes for ready orders and active couriers (without ``courier_ids``, those on
    shift unless ``on_shift`` is false). A courier's open orders use their capacity; a lane starts
    at the courier's fresh fix or the depot (``eta_max_fix_minutes``). The budget
    (``solver_time_limit_seconds``) covers the whole suggestion, the travel matrix included: the
    solver gets what the reading and the matrix left of it."""
    deadline = time.monotonic() + settings.solver_time_limit_seconds
    _refuse_duplicates(order_ids, "orderIds", "order")
    _refuse_duplicates(courier_ids, "courierIds", "courier")
    candidates = _candidates(company_id, order_ids, courier_ids, on_shift)
    depot = _default_depot(company_id)
    max_age = timedelta(minutes=settings.eta_max_fix_minutes)
    starts = [_start(c, depot, max_age) for c in candidates.couriers]
    points = [(s["lat"], s["lon"]) for s in starts] + [(o.lat, o.lon) for o in candidates.orders]
    matrix = router.duration_matrix(points)
    problem = _problem(matrix, candidates, capacity, service_minutes, shift_hours)
    try:
        solution = solve(
            problem,
            time_limit=max(MIN_SOLVER_SECONDS, deadline - time.monotonic()),
            first_strategy=settings.solver_first_strategy,
        )
    except SolverFailed as exc:
        raise BadGateway(f"The route solver failed: {exc}") from None
    return _suggestion(candidates, starts, solution, matrix.method, capacity)


def _candidates(
    company_id: int, order_ids: list[int] | None, courier_ids: list[int] | None, on_shift: bool = True
) -> _Candidates:
    orders_query = Order.select().where(Order.company == company_id)
    if order_ids is not None:
        wanted = set(order_ids)
        orders = list(orders_query.where(Order.id.in_(wanted)))
        if len(orders) != len(wanted):
            raise NotFound("Some orders do not exist.")
    else:
        orders = list(orders_query.where(Order.status == "ready").order_by(Order.id))
    couriers_query = Courier.select().where(Courier.company == company_id)
    if courier_ids is not None:
        wanted_couriers = set(courier_ids)
        couriers = list(couriers_query.where(Courier.id.in_(wanted_couriers)).order_by(Courier.id))
        if len(couriers) != len(wanted_couriers):
            raise NotFound("Some couriers do not exist.")
        couriers = [c for c in couriers if c.active]
    else:
        couriers = list(couriers_query.where(Courier.active).order_by(Courier.id))
        if on_shift:
            couriers = [c for c in couriers if open_shift(c.id) is not None]
    plannable = [o for o in orders if o.status == "ready"]
    skipped = [str(o.id) for o in orders if o.status != "ready"]
    if plannable and not couriers and courier_ids is None and on_shift:
        raise Invalid(
            "Nothing to plan: no courier is on shift (choose couriers with courierIds, or onShift false).",
            errors=[{"field": "courierIds", "message": "no active courier is on shift"}],
        )
    if not plannable or not couriers:
        raise Invalid("Nothing to plan: no ready orders or no active couriers.")
    if len(couriers) > MAX_ROUTES:
        raise Invalid(
            f"A plan has at most {MAX_ROUTES} routes: choose the couriers with courierIds.",
            errors=[{"field": "courierIds", "message": f"more than {MAX_ROUTES} active couriers"}],
        )
    # Without a list, the oldest ready orders up to the bound are planned; the rest are listed
    # as unassigned.
    skipped = [str(o.id) for o in plannable[MAX_SUGGEST_ORDERS:]] + skipped
    held = dict.fromkeys((c.id for c in couriers), 0)
    for row in (
        Order.select(Order.courier, peewee.fn.COUNT(Order.id).alias("n"))
        .where(Order.courier.in_(list(held)) & Order.status.in_(tuple(ACTIVE)))
        .group_by(Order.courier)
    ):
        held[row.courier_id] = row.n
    return _Candidates(plannable[:MAX_SUGGEST_ORDERS], couriers, skipped, [held[c.id] for c in couriers])


def _problem(
    matrix: DurationMatrix, candidates: _Candidates, capacity: int, service_minutes: float, shift_hours: float
) -> Problem:
    """Nodes: each courier's start, then each order; times in seconds from now."""
    now = clock.now()
    shift = int(shift_hours * 3600)
    service = int(service_minutes * 60)
    first_stop = len(candidates.couriers)
    stops = [
        Stop(
            node=first_stop + i,
            service=service,
            early=_seconds_from(now, o.window_start, 0),
            late=_seconds_from(now, o.window_end, shift),
        )
        for i, o in enumerate(candidates.orders)
    ]
    vehicles = [
        Vehicle(start=i, capacity=max(0, capacity - candidates.held[i]), available_until=shift)
        for i in range(first_stop)
    ]
    return Problem(np.rint(matrix.seconds).astype(np.int64), vehicles, stops)


def _suggestion(
    candidates: _Candidates, starts: list[dict[str, Any]], solution: Solution, method: str, capacity: int
) -> dict[str, Any]:
    orders = candidates.orders
    routes = [
        {
            "courierId": str(courier.id),
            "start": starts[v],
            "capacity": capacity,
            "held": candidates.held[v],
            "stops": [
                {"orderId": str(orders[s].id), "etaSeconds": solution.arrivals[v][k]}
                for k, s in enumerate(solution.routes[v])
            ],
        }
        for v, courier in enumerate(candidates.couriers)
    ]
    unassigned = [str(orders[i].id) for i in solution.unassigned] + candidates.skipped
    return {"suggested": True, "routes": routes, "unassigned": unassigned, "method": method}


def _parse_id(text: str, what: str) -> int:
    if not text.isdigit():
        raise NotFound(f"No such {what}.")
    return int(text)


def time_plan(
    router: Router,
    company_id: int,
    routes: list[dict[str, Any]],
    service_minutes: float,
    max_fix_age: timedelta | None = None,
) -> dict[str, Any]:
    """Re-time each lane along its given sequence (never reordered)."""
    seen: set[int] = set()
    for route in routes:
        for stop in route["stops"]:
            order_id = _parse_id(stop["orderId"], "order")
            if order_id in seen:
                raise Invalid(
                    f"Order {order_id} appears twice in the plan.",
                    errors=[{"field": "orderId", "message": f"duplicate order {order_id}"}],
                )
            seen.add(order_id)
    courier_ids = [_parse_id(r["courierId"], "courier") for r in routes]
    if len(set(courier_ids)) != len(courier_ids):
        raise Invalid(
            "A courier has two routes in the plan.",
            errors=[{"field": "courierId", "message": "duplicate courier"}],
        )
    couriers = {
        c.id: c for c in Courier.select().where((Courier.company == company_id) & Courier.id.in_(courier_ids))
    }
    orders = (
        {o.id: o for o in Order.select().where((Order.company == company_id) & Order.id.in_(seen))}
        if seen
        else {}
    )
    if len(couriers) != len(set(courier_ids)):
        raise NotFound("Some couriers of the plan do not exist.")
    if len(orders) != len(seen):
        raise NotFound("Some orders of the plan do not exist.")
    depot = _default_depot(company_id)
    service = int(service_minutes * 60)
    timed = []
    methods = set()
    for route, courier_id in zip(routes, courier_ids, strict=True):
        start = _start(couriers[courier_id], depot, max_fix_age)
        stop_orders = [orders[int(s["orderId"])] for s in route["stops"]]
        arrivals, total, method = time_sequence(
            router, (start["lat"], start["lon"]), [(o.lat, o.lon) for o in stop_orders], service
        )
        if stop_orders:
            methods.add(method)
        timed.append(
            {
                "courierId": str(courier_id),
                "start": start,
                "stops": [
                    {"orderId": str(o.id), "etaSeconds": eta}
                    for o, eta in zip(stop_orders, arrivals, strict=True)
                ],
                "durationSeconds": total,
            }
        )
    method = "straight_line" if "straight_line" in methods else "road"
    return {"routes": timed, "method": method}


def move_stop(
    router: Router,
    company_id: int,
    routes: list[dict[str, Any]],
    order_id: str,
    to_courier: str,
    to_index: int | None,
    service_minutes: float,
    max_fix_age: timedelta | None = None,
) -> dict[str, Any]:
    lanes = [{"courierId": r["courierId"], "stops": [dict(s) for s in r["stops"]]} for r in routes]
    source = next((lane for lane in lanes if any(s["orderId"] == order_id for s in lane["stops"])), None)
    if source is None:
        raise Invalid(
            "The order is not in the plan.", errors=[{"field": "orderId", "message": "not in plan"}]
        )
    source["stops"] = [s for s in source["stops"] if s["orderId"] != order_id]
    target = next((lane for lane in lanes if lane["courierId"] == to_courier), None)
    if target is None:
        if len(lanes) >= 20:
            raise Invalid("A plan has at most 20 routes.")
        target = {"courierId": to_courier, "stops": []}
        lanes.append(target)
    index = len(target["stops"]) if to_index is None else min(to_index, len(target["stops"]))
    target["stops"].insert(index, {"orderId": order_id})
    if len(target["stops"]) > 200:
        raise Invalid("A route has at most 200 stops.")
    return time_plan(router, company_id, lanes, service_minutes, max_fix_age)


def apply(company_id: int, routes: list[dict[str, Any]], actor_id: int) -> dict[str, Any]:
    stops: list[tuple[int, int, int]] = []
    seen: set[int] = set()
    _refuse_duplicates([r["courierId"] for r in routes], "courierId", "courier")
    for route in routes:
        sequences = sorted(s["sequence"] for s in route["stops"])
        if sequences != list(range(1, len(sequences) + 1)):
            raise Invalid(
                "Each route's sequences must be 1..n.", errors=[{"field": "sequence", "message": "not 1..n"}]
            )
        for stop in route["stops"]:
            if stop["orderId"] in seen:
                raise Invalid(
                    f"Order {stop['orderId']} appears twice in the plan.",
                    errors=[{"field": "orderId", "message": "duplicate order"}],
                )
            seen.add(stop["orderId"])
            stops.append((stop["orderId"], route["courierId"], stop["sequence"]))
    return {"applied": assign_orders(company_id, stops, actor_id)}
