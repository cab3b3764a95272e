"""Plan rules: the solver's suggestion over ready orders and active couriers, re-timing a given
sequence without reordering it, moving one stop, and applying a plan atomically."""

from __future__ import annotations

import dataclasses
import time
from datetime import date, datetime, timedelta
from datetime import time as dt_time
from typing import Any

import numpy as np

from appliance.common import clock
from appliance.common.problems import BadGateway, Invalid, NotFound
from appliance.dispatch.couriers.lookups import latest_location, open_shift
from appliance.dispatch.eta.service import (
    YEREVAN_CENTRE,
    expected_sequence,
    leg_seconds,
    road_times,
    seconds_until,
)
from appliance.dispatch.models import Courier, Depot, Order
from appliance.dispatch.orders.service import assign_orders
from appliance.dispatch.orders.state import ACTIVE
from appliance.dispatch.planning.reasons import reasons
from appliance.dispatch.planning.solver import (
    HORIZON_MAX,
    Lock,
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
    return _depot_start(depot)


def _default_depot(company_id: int) -> Depot | None:
    return Depot.get_or_none((Depot.company == company_id) & Depot.is_default)


def _seconds_from(now: datetime, moment: datetime | None, default: int) -> int:
    if moment is None:
        return default
    return max(0, min(HORIZON_MAX, int((moment - now).total_seconds())))


# A later day's shift starts here (Yerevan time) unless a courier's shiftStart says otherwise.
LATER_DAY_SHIFT_START = dt_time(9, 0)
MAX_DAYS_AHEAD = 366


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """The optional steering of a suggestion (issue 45); the defaults plan exactly as before."""

    day: date | None = None  # the Yerevan day planned; None: every ready order, from now
    couriers: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)  # per-courier limits
    locked: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # {orderId, courierId, index}
    allow_late: bool = False


@dataclasses.dataclass
class _Candidates:
    """What a suggestion plans: ready orders (oldest first, up to the bound) and active couriers,
    with the ids it lists as unassigned without planning them (and why)."""

    orders: list[Order]
    couriers: list[Courier]
    skipped: list[tuple[str, str]]  # (order id, reason)
    held: list[int]  # open orders each courier already holds (they use capacity)
    held_grams: list[int]  # their weight


def _yerevan_day(moment: datetime) -> date:
    return moment.astimezone(clock.YEREVAN).date()


def _on_day(order: Order, day: date) -> bool:
    """The order's delivery window falls on ``day`` (Yerevan), or it has no window."""
    moment = order.window_start or order.window_end
    return moment is None or _yerevan_day(moment) == day


def per_courier(entries: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The couriers entries by courier id; one courier given twice is refused (422)."""
    _refuse_duplicates([e["courierId"] for e in entries], "couriers", "courier")
    return {e["courierId"]: e for e in entries}


def _plan_day(options: PlanOptions) -> tuple[date | None, bool]:
    """The day planned and whether it is later than today; a past day is refused (422)."""
    if options.day is None:
        return None, False
    today = _yerevan_day(clock.now())
    if options.day < today:
        raise Invalid(
            "A past day cannot be planned.", errors=[{"field": "date", "message": "before today in Yerevan"}]
        )
    if options.day > today + timedelta(days=MAX_DAYS_AHEAD):
        raise Invalid(
            "A plan reaches at most a year ahead.",
            errors=[{"field": "date", "message": f"more than {MAX_DAYS_AHEAD} days ahead"}],
        )
    return options.day, options.day > today


def _origin(day: date | None, later: bool) -> datetime:
    """What the plan's seconds count from: now today, the day's midnight (Yerevan) on a later day
    (so that any later day fits the solver's horizon; the answer says it as timesFrom)."""
    if later and day is not None:
        return _on(day, dt_time(0, 0))
    return clock.now()


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
    options: PlanOptions | None = None,
) -> dict[str, Any]:
    """The solver's routes for ready orders and active couriers (without ``courier_ids``, those on
    shift unless ``on_shift`` is false, or those ``options.couriers`` names; every active courier
    on a later day). A courier's open orders use their capacity; a lane starts at the courier's
    fresh fix or the depot (``eta_max_fix_minutes``). The budget (``solver_time_limit_seconds``)
    covers the whole suggestion, the travel matrix included: the solver gets what the reading and
    the matrix left of it."""
    deadline = time.monotonic() + settings.solver_time_limit_seconds
    options = options or PlanOptions()
    _refuse_duplicates(order_ids, "orderIds", "order")
    _refuse_duplicates(courier_ids, "courierIds", "courier")
    day, later = _plan_day(options)
    courier_ids = _planned_courier_ids(courier_ids, options)
    candidates = _candidates(company_id, order_ids, courier_ids, on_shift and not later, day, later)
    depot = _default_depot(company_id)
    max_age = timedelta(minutes=settings.eta_max_fix_minutes)
    starts = [
        _lane_start(c, depot, max_age, options.couriers.get(c.id, {}), later) for c in candidates.couriers
    ]
    origin = _origin(day, later)
    lanes = _lanes(candidates, options, capacity, service_minutes, shift_hours, day, later, origin)
    points = [(s["lat"], s["lon"]) for s in starts] + [(o.lat, o.lon) for o in candidates.orders]
    if any(lane.return_to_depot for lane in lanes):  # the depot is a node only when a lane ends there
        depot_start = _depot_start(depot)
        points.append((depot_start["lat"], depot_start["lon"]))
    matrix = router.duration_matrix(points)
    problem = _problem(matrix, candidates, lanes, service_minutes, options, origin)
    try:
        solution = solve(
            problem,
            time_limit=max(MIN_SOLVER_SECONDS, deadline - time.monotonic()),
            first_strategy=settings.solver_first_strategy,
        )
    except SolverFailed as exc:
        raise BadGateway(f"The route solver failed: {exc}") from None
    windowed = {i for i, o in enumerate(candidates.orders) if o.window_start or o.window_end}
    why = reasons(problem, solution, windowed, matrix.unreachable)
    answer = _suggestion(candidates, starts, solution, matrix.method, lanes, why, options.allow_late, origin)
    if day is not None:
        answer["timesFrom"] = clock.iso(origin)
    return answer


def _planned_courier_ids(courier_ids: list[int] | None, options: PlanOptions) -> list[int] | None:
    """The couriers chosen by name: ``courierIds``, else those ``couriers`` sets limits for. A
    courier given limits but not chosen is a mistake (422), not silently dropped."""
    if courier_ids is None:
        return list(options.couriers) or None
    stray = set(options.couriers) - set(courier_ids)
    if stray:
        raise Invalid(
            "Limits are given for a courier who is not planned.",
            errors=[{"field": "couriers", "message": f"courier {min(stray)} is not in courierIds"}],
        )
    return courier_ids


def _lane_start(
    courier: Courier, depot: Depot | None, max_age: timedelta, limits: dict[str, Any], later: bool
) -> dict[str, Any]:
    """Where the courier's lane starts: its ``start`` when given (gps: the fresh fix, else the
    depot; depot; a point), else the fresh fix today and the depot on a later day."""
    wanted = limits.get("start")
    if isinstance(wanted, dict):
        return {"lat": wanted["lat"], "lon": wanted["lon"], "source": "point"}
    if wanted == "depot" or (wanted is None and later):
        return _depot_start(depot)
    return _start(courier, depot, max_age)


def _depot_start(depot: Depot | None) -> dict[str, Any]:
    if depot is not None:
        return {"lat": depot.lat, "lon": depot.lon, "source": "depot"}
    return {"lat": YEREVAN_CENTRE[0], "lon": YEREVAN_CENTRE[1], "source": "city_centre"}


def _candidates(
    company_id: int,
    order_ids: list[int] | None,
    courier_ids: list[int] | None,
    on_shift: bool = True,
    day: date | None = None,
    later: bool = False,
) -> _Candidates:
    orders_query = Order.select().where(Order.company == company_id)
    if order_ids is not None:
        wanted = set(order_ids)
        orders = list(orders_query.where(Order.id.in_(wanted)))
        if len(orders) != len(wanted):
            raise NotFound("Some orders do not exist.")
    else:
        orders = list(orders_query.where(Order.status == "ready").order_by(Order.id))
        if day is not None:  # another day's orders are not this plan's business
            orders = [o for o in orders if _on_day(o, day)]
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
    ready = [o for o in orders if o.status == "ready"]
    plannable = [o for o in ready if day is None or _on_day(o, day)]
    skipped = [(str(o.id), "not_ready") for o in orders if o.status != "ready"]
    skipped += [(str(o.id), "window") for o in ready if day is not None and not _on_day(o, day)]
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
    skipped = [(str(o.id), "over_limit") for o in plannable[MAX_SUGGEST_ORDERS:]] + skipped
    held, grams = _held(couriers, day if later else None)
    return _Candidates(plannable[:MAX_SUGGEST_ORDERS], couriers, skipped, held, grams)


def _held(couriers: list[Courier], later_day: date | None) -> tuple[list[int], list[int]]:
    """Each courier's open orders and their grams: all of them today; on a later day, those whose
    window falls on it (today's run is over by then)."""
    count = dict.fromkeys((c.id for c in couriers), 0)
    grams = dict.fromkeys(count, 0)
    for order in Order.select(Order.courier, Order.weight_kg, Order.window_start, Order.window_end).where(
        Order.courier.in_(list(count)) & Order.status.in_(tuple(ACTIVE))
    ):
        windowed = order.window_start is not None or order.window_end is not None
        if later_day is not None and not (windowed and _on_day(order, later_day)):
            continue
        count[order.courier_id] += 1
        grams[order.courier_id] += _grams(order.weight_kg)
    return [count[c.id] for c in couriers], [grams[c.id] for c in couriers]


def _grams(kilograms: float | None) -> int:
    return round((kilograms or 0) * 1000)


@dataclasses.dataclass(frozen=True)
class _Lane:
    """One courier's limits in this plan (the plan-wide values unless the courier has its own)."""

    capacity: int
    capacity_kg: float | None
    available_from: int  # seconds from now
    available_until: int
    service: int | None  # seconds; None: the plan-wide service
    return_to_depot: bool


def _lanes(
    candidates: _Candidates,
    options: PlanOptions,
    capacity: int,
    service_minutes: float,
    shift_hours: float,
    day: date | None,
    later: bool,
    origin: datetime,
) -> list[_Lane]:
    now = clock.now()
    lanes = []
    for courier in candidates.couriers:
        limits = options.couriers.get(courier.id, {})
        begins = _shift_start(now, day, later, limits.get("shiftStart"))
        ends = begins + timedelta(hours=shift_hours)
        if limits.get("shiftEnd") is not None:
            ends = _on(day or _yerevan_day(now), limits["shiftEnd"])
        if ends <= begins and limits.get("shiftEnd") is not None:
            raise Invalid(
                "A courier's shift ends before it starts.",
                errors=[
                    {"field": "couriers", "message": f"courier {courier.id}: shiftEnd not after shiftStart"}
                ],
            )
        service = limits.get("serviceMinutes")
        lanes.append(
            _Lane(
                capacity=limits.get("capacity") or capacity,
                capacity_kg=limits.get("capacityKg"),
                available_from=_seconds_from(origin, begins, 0),
                available_until=_seconds_from(origin, ends, 0),
                service=None if service is None or service == service_minutes else int(service * 60),
                return_to_depot=bool(limits.get("returnToDepot")),
            )
        )
    return lanes


def _on(day: date, at: dt_time) -> datetime:
    return datetime.combine(day, at, tzinfo=clock.YEREVAN)


def _shift_start(now: datetime, day: date | None, later: bool, at: dt_time | None) -> datetime:
    """When the courier's day starts: its shiftStart on the plan's day (never before now), else now,
    or 09:00 on a later day."""
    if at is not None:
        return max(now, _on(day or _yerevan_day(now), at))
    if later and day is not None:
        return _on(day, LATER_DAY_SHIFT_START)
    return now


def _problem(
    matrix: DurationMatrix,
    candidates: _Candidates,
    lanes: list[_Lane],
    service_minutes: float,
    options: PlanOptions,
    origin: datetime,
) -> Problem:
    """Nodes: each courier's start, then each order, then the depot; times in seconds from
    ``origin``."""
    shift = max(lane.available_until for lane in lanes)
    service = int(service_minutes * 60)
    first_stop = len(candidates.couriers)
    depot_node = first_stop + len(candidates.orders)
    stops = [
        Stop(
            node=first_stop + i,
            service=service,
            early=_seconds_from(origin, o.window_start, 0),
            late=_seconds_from(origin, o.window_end, shift),
            weight=_grams(o.weight_kg),
        )
        for i, o in enumerate(candidates.orders)
    ]
    vehicles = [
        Vehicle(
            start=i,
            capacity=max(0, lane.capacity - candidates.held[i]),
            available_from=lane.available_from,
            available_until=lane.available_until,
            weight_capacity=None
            if lane.capacity_kg is None
            else max(0, _grams(lane.capacity_kg) - candidates.held_grams[i]),
            service=lane.service,
            end=depot_node if lane.return_to_depot else None,
        )
        for i, lane in enumerate(lanes)
    ]
    locks = _locks(candidates, options.locked)
    return Problem(
        np.rint(matrix.seconds).astype(np.int64), vehicles, stops, locks=locks, allow_late=options.allow_late
    )


def _locks(candidates: _Candidates, locked: list[dict[str, Any]]) -> list[Lock]:
    """Each locked stop as the solver's Lock; a lock naming an order or a courier this plan does
    not hold, the same order twice or two orders at one place is refused (422)."""
    order_index = {o.id: i for i, o in enumerate(candidates.orders)}
    courier_index = {c.id: v for v, c in enumerate(candidates.couriers)}
    locks: list[Lock] = []
    places: set[tuple[int, int]] = set()
    for lock in locked:
        problem = None
        if lock["orderId"] not in order_index:
            problem = f"order {lock['orderId']} is not among the orders planned"
        elif lock["courierId"] not in courier_index:
            problem = f"courier {lock['courierId']} is not among the couriers planned"
        elif any(existing.stop == order_index[lock["orderId"]] for existing in locks):
            problem = f"order {lock['orderId']} is locked twice"
        elif (lock["courierId"], lock["index"]) in places:
            problem = f"two orders are locked at index {lock['index']} of courier {lock['courierId']}"
        if problem is not None:
            raise Invalid("A locked stop cannot be kept.", errors=[{"field": "locked", "message": problem}])
        places.add((lock["courierId"], lock["index"]))
        locks.append(Lock(order_index[lock["orderId"]], courier_index[lock["courierId"]], lock["index"]))
    return locks


def _suggestion(
    candidates: _Candidates,
    starts: list[dict[str, Any]],
    solution: Solution,
    method: str,
    lanes: list[_Lane],
    why: dict[int, str],
    show_lateness: bool,
    origin: datetime,
) -> dict[str, Any]:
    orders = candidates.orders
    routes = [
        {
            "courierId": str(courier.id),
            "start": starts[v],
            "capacity": lanes[v].capacity,
            "held": candidates.held[v],
            "stops": [
                _stop(orders[s], solution.arrivals[v][k], show_lateness, origin)
                for k, s in enumerate(solution.routes[v])
            ],
        }
        for v, courier in enumerate(candidates.couriers)
    ]
    unassigned = [str(orders[i].id) for i in solution.unassigned] + [
        order_id for order_id, _ in candidates.skipped
    ]
    unplaced = [{"orderId": str(orders[i].id), "reason": why[i]} for i in solution.unassigned] + [
        {"orderId": order_id, "reason": reason} for order_id, reason in candidates.skipped
    ]
    return {
        "suggested": True,
        "routes": routes,
        "unassigned": unassigned,
        "unplaced": unplaced,
        "method": method,
    }


def _stop(order: Order, eta: int, show_lateness: bool, origin: datetime) -> dict[str, Any]:
    # The solver's arrival already counts the waits for windows: no expectedAt is needed (and a
    # suggestion without the steering fields answers exactly as before).
    stop: dict[str, Any] = {"orderId": str(order.id), "etaSeconds": eta}
    if show_lateness:
        # Counted from the window's end itself (it may have closed before now).
        closes = None if order.window_end is None else int((order.window_end - origin).total_seconds())
        stop["lateSeconds"] = 0 if closes is None else max(0, eta - closes)
    return stop


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
    """Re-time each lane along its given sequence (never reordered): ``etaSeconds`` the road
    estimate (drive and service, as before), ``expectedAt`` the expected hand-over counting the
    waits where the courier is early for a window, as the planner times a lane."""
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
    now = clock.now()
    timed = []
    methods = set()
    for route, courier_id in zip(routes, courier_ids, strict=True):
        start = _start(couriers[courier_id], depot, max_fix_age)
        stop_orders = [orders[int(s["orderId"])] for s in route["stops"]]
        legs, method = leg_seconds(
            router, (start["lat"], start["lon"]), [(o.lat, o.lon) for o in stop_orders]
        )
        arrivals, total = road_times(legs, service)
        expected = expected_sequence(legs, service, [seconds_until(now, o.window_start) for o in stop_orders])
        if stop_orders:
            methods.add(method)
        timed.append(
            {
                "courierId": str(courier_id),
                "start": start,
                "stops": [
                    {
                        "orderId": str(o.id),
                        "etaSeconds": eta,
                        "expectedAt": clock.iso(now + timedelta(seconds=due)),
                    }
                    for o, eta, due in zip(stop_orders, arrivals, expected, strict=True)
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
