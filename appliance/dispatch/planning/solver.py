"""The planner: OR-Tools routing, seeded by PyVRP's iterated local search.

Input is plain data (an integer travel matrix over nodes, couriers with a start node and a
capacity, stops with service times and windows); output is one ordered list of stops per courier
and the stops it could not place. Every stop is optional with a large penalty, so the solver
always answers and names what does not fit instead of failing on tight windows.

Portfolio: PyVRP runs for the first part of the budget (it is strongest at finding good
solutions quickly); its routes are loaded into OR-Tools with ReadAssignmentFromRoutes and guided
local search improves them for the rest of the budget. When PyVRP has nothing, OR-Tools starts
from its own first-solution strategy. bench/plans measures the portfolio against VROOM and PyVRP
alone.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

log = logging.getLogger("appliance.planning")

UNSERVED_PENALTY = 10_000_000
HORIZON_MAX = 10 * 24 * 3600
UNLIMITED_GRAMS = 10**12  # a courier without a weight limit
# Beyond this many stops PyVRP plans alone, stopped at the deadline (_solve_large).
LARGE_PROBLEM_STOPS = 400
# PyVRP's own default. 30 halved its first local search at 1,000 stops, but on a day of 1,000
# orders half with three-hour windows (bench/day) that search then ended with time warp (992
# stops, infeasible) and the iterated search, its penalties at their bound, never found a
# feasible plan in 30 s: the deadline's repair left 40 orders out where 60 neighbours place all
# 1,000 from the first local search on.
LARGE_NEIGHBOURS = 60


class SolverFailed(Exception):
    """The solver could not produce any plan (answered as 502)."""


@dataclasses.dataclass(frozen=True)
class Vehicle:
    start: int  # node index
    capacity: int
    available_from: int = 0  # seconds from plan start
    available_until: int = HORIZON_MAX
    weight_capacity: int | None = None  # grams; None: weight is not limited
    service: int | None = None  # seconds at each stop for this courier; None: the stop's own
    return_to_start: bool | None = None  # None: the problem's return_to_start
    end: int | None = None  # node the route ends at (e.g. the depot); None: as return_to_start says


@dataclasses.dataclass(frozen=True)
class Stop:
    node: int
    service: int = 0
    early: int = 0
    late: int = HORIZON_MAX
    demand: int = 1
    weight: int = 0  # grams


@dataclasses.dataclass(frozen=True)
class Lock:
    """A stop that stays with a vehicle at a position (0: its first stop) on re-optimisation."""

    stop: int
    vehicle: int
    index: int


# Each second a stop is served after its window closes, when lateness is allowed: far below the
# penalty of leaving a stop out (a late delivery beats none), far above a second of driving.
LATE_COST_PER_SECOND = 100


# Integer seconds (or costs) between nodes: nested lists, or a square numpy array (what the
# planner builds from a road table, so that 1,000 stops never become a million Python ints).
Matrix = Sequence[Sequence[int]] | np.ndarray


@dataclasses.dataclass(frozen=True)
class Problem:
    durations: Matrix  # seconds between nodes
    vehicles: Sequence[Vehicle]
    stops: Sequence[Stop]
    costs: Matrix | None = None  # arc costs; durations when None
    return_to_start: bool = False  # couriers end where their last stop is
    locks: Sequence[Lock] = ()
    allow_late: bool = False  # windows' ends are soft: served late at a cost per second

    @property
    def cost_matrix(self) -> Matrix:
        return self.costs if self.costs is not None else self.durations

    def end(self, vehicle: Vehicle) -> int | None:
        """The node the vehicle's route ends at; None for an open route (it ends at its last stop)."""
        if vehicle.end is not None:
            return vehicle.end
        returns = self.return_to_start if vehicle.return_to_start is None else vehicle.return_to_start
        return vehicle.start if returns else None

    def service(self, vehicle: Vehicle, stop: Stop) -> int:
        return stop.service if vehicle.service is None else vehicle.service

    @property
    def weighs(self) -> bool:
        return any(v.weight_capacity is not None for v in self.vehicles)

    @property
    def ortools_only(self) -> bool:
        """Locks and per-courier service times are modelled in OR-Tools only (PyVRP has neither)."""
        return bool(self.locks) or any(v.service is not None for v in self.vehicles)


@dataclasses.dataclass
class Solution:
    routes: list[list[int]]  # per vehicle, stop indices in visiting order
    arrivals: list[list[int]]  # per vehicle, arrival second of each stop
    unassigned: list[int]
    cost: int
    solver: str


def solve(
    problem: Problem,
    *,
    time_limit: float = 2.0,
    first_strategy: str = "PARALLEL_CHEAPEST_INSERTION",
    seed_share: float = 0.85,
    use_seed: bool = True,
) -> Solution:
    if not problem.vehicles:
        raise SolverFailed("no vehicles")
    problem = _with_arrays(problem)
    # A stop no courier can reach inside its window (the window closes before it opens, or before
    # any courier is available, or opens after every courier's day) is unassigned without asking
    # the solvers: an empty time range makes OR-Tools' model infeasible as a whole.
    earliest = min(v.available_from for v in problem.vehicles)
    latest = max(v.available_until for v in problem.vehicles)
    placeable = [
        i
        for i, stop in enumerate(problem.stops)
        if stop.early <= latest
        and (problem.allow_late or (stop.early <= stop.late and stop.late >= earliest))
    ]
    if len(placeable) < len(problem.stops) or _has_idle_nodes(problem):
        inner = _restricted(problem, placeable)
        solution = solve(
            inner,
            time_limit=time_limit,
            first_strategy=first_strategy,
            seed_share=seed_share,
            use_seed=use_seed,
        )
        solution.routes = [[placeable[s] for s in route] for route in solution.routes]
        solution.unassigned = sorted(
            [placeable[s] for s in solution.unassigned]
            + sorted(set(range(len(problem.stops))) - set(placeable))
        )
        return solution
    if not problem.stops:
        return Solution([[] for _ in problem.vehicles], [[] for _ in problem.vehicles], [], 0, "none")
    if problem.ortools_only:
        use_seed = False
    if use_seed and len(problem.stops) > LARGE_PROBLEM_STOPS:
        return _solve_large(problem, time_limit, first_strategy)
    started = time.monotonic()
    seed: list[list[int]] | None = None
    if use_seed:
        try:
            seed = _pyvrp_routes(problem, max(0.05, time_limit * seed_share))
        except Exception as exc:  # the seed is an optimisation; OR-Tools alone still answers
            log.warning("PyVRP seed failed: %s", exc)
    remaining = max(0.1, time_limit - (time.monotonic() - started))
    return _ortools_or_fail(problem, remaining, first_strategy, seed)


def _solve_large(problem: Problem, time_limit: float, first_strategy: str) -> Solution:
    """PyVRP alone, stopped when the whole budget (its set-up included) is spent. OR-Tools'
    model of a thousand stops (a million arcs, registered from Python) costs about half a second
    before it searches, and it finds no first solution of its own within a one-second budget; it
    only answers here when PyVRP has nothing feasible."""
    deadline = time.monotonic() + time_limit
    routes = None
    try:
        routes = _pyvrp_routes(problem, time_limit, deadline=deadline)
    except Exception as exc:
        log.warning("PyVRP failed: %s", exc)
    if routes is not None:
        return _timed(problem, routes, "pyvrp")
    return _ortools_or_fail(problem, max(0.1, deadline - time.monotonic()), first_strategy, None)


def _ortools_or_fail(
    problem: Problem, time_limit: float, first_strategy: str, seed: list[list[int]] | None
) -> Solution:
    try:
        return _ortools(problem, time_limit, first_strategy, seed)
    except SolverFailed:
        raise
    except Exception as exc:  # OR-Tools raises plain exceptions ("CP Solver fail"): a failed solve
        raise SolverFailed(f"OR-Tools: {exc}") from exc


def _timed(problem: Problem, routes: list[list[int]], solver_name: str) -> Solution:
    """A Solution for given routes (stop indices per vehicle): each stop's arrival as OR-Tools
    reports it (the earliest start of service: leaving at the courier's availability, waiting
    for a window to open), and the cost as OR-Tools counts it (arc costs, plus the penalty of
    every stop left out)."""
    durations = np.asarray(problem.durations, dtype=np.int64)
    costs = np.asarray(problem.cost_matrix, dtype=np.int64)
    arrivals: list[list[int]] = []
    total = 0
    for vehicle, route in zip(problem.vehicles, routes, strict=True):
        clock, here, times = vehicle.available_from, vehicle.start, []
        for number in route:
            stop = problem.stops[number]
            clock = max(clock + int(durations[here, stop.node]), stop.early)
            times.append(clock)
            if problem.allow_late:
                total += LATE_COST_PER_SECOND * max(0, clock - stop.late)
            clock += problem.service(vehicle, stop)
            total += int(costs[here, stop.node])
            here = stop.node
        end = problem.end(vehicle)
        if route and end is not None:
            total += int(costs[here, end])
        arrivals.append(times)
    served = {number for route in routes for number in route}
    unassigned = [i for i in range(len(problem.stops)) if i not in served]
    return Solution(routes, arrivals, unassigned, total + UNSERVED_PENALTY * len(unassigned), solver_name)


def _with_arrays(problem: Problem) -> Problem:
    """The problem with its matrices as numpy arrays, converted once (nested lists of a thousand
    stops take a tenth of a second to convert, and every step below reads them)."""
    if isinstance(problem.durations, np.ndarray) and (
        problem.costs is None or isinstance(problem.costs, np.ndarray)
    ):
        return problem
    return dataclasses.replace(
        problem,
        durations=np.asarray(problem.durations, dtype=np.int64),
        costs=None if problem.costs is None else np.asarray(problem.costs, dtype=np.int64),
    )


def _has_idle_nodes(problem: Problem) -> bool:
    """Some node is neither a start, an end nor a stop (OR-Tools would have to visit it)."""
    used = {v.start for v in problem.vehicles} | {v.end for v in problem.vehicles if v.end is not None}
    return len(used | {stop.node for stop in problem.stops}) < len(problem.durations)


def _restricted(problem: Problem, keep: list[int]) -> Problem:
    """The same problem over the stops numbered in ``keep`` only: nodes that are neither a vehicle
    start nor a kept stop leave the matrices (OR-Tools would otherwise have to visit them)."""
    ends = {v.end for v in problem.vehicles if v.end is not None}
    nodes = sorted({v.start for v in problem.vehicles} | ends | {problem.stops[i].node for i in keep})
    renumber = {node: k for k, node in enumerate(nodes)}

    def sub(matrix: Matrix) -> np.ndarray:
        return np.asarray(matrix, dtype=np.int64)[np.ix_(nodes, nodes)]

    position = {stop: k for k, stop in enumerate(keep)}
    return dataclasses.replace(
        problem,
        durations=sub(problem.durations),
        vehicles=[
            dataclasses.replace(v, start=renumber[v.start], end=None if v.end is None else renumber[v.end])
            for v in problem.vehicles
        ],
        stops=[dataclasses.replace(problem.stops[i], node=renumber[problem.stops[i].node]) for i in keep],
        costs=None if problem.costs is None else sub(problem.costs),
        locks=[
            dataclasses.replace(lock, stop=position[lock.stop])
            for lock in problem.locks
            if lock.stop in position
        ],
    )


# ---------------------------------------------------------------------------------------------
# OR-Tools


@dataclasses.dataclass
class _Model:
    """An OR-Tools routing model of a problem: the index manager, the model and its time
    dimension (whose cumulative values are the arrival times)."""

    manager: Any
    routing: Any
    time: Any


def _ortools(
    problem: Problem, time_limit: float, first_strategy: str, seed: list[list[int]] | None
) -> Solution:
    started = time.monotonic()
    model = _ortools_model(problem)
    # The budget covers building the model too.
    params = _search_parameters(first_strategy, time_limit - (time.monotonic() - started))
    assignment, solver_name = _ortools_search(model, problem, params, seed)
    return _ortools_solution(model, problem, assignment, solver_name)


def _ortools_model(problem: Problem) -> _Model:
    from ortools.constraint_solver import pywrapcp

    n = len(problem.durations)
    vehicles = problem.vehicles
    # Open routes end at an extra "anywhere" node that costs nothing to reach.
    route_ends = [problem.end(v) for v in vehicles]
    extra = 0 if all(end is not None for end in route_ends) else 1
    size = n + extra
    starts = [v.start for v in vehicles]
    ends = [n if end is None else end for end in route_ends]
    manager = pywrapcp.RoutingIndexManager(size, len(vehicles), starts, ends)
    routing = pywrapcp.RoutingModel(manager)
    cost, demand = _arc_tables(problem, size)
    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitMatrix(cost))
    horizon = min(
        max(max(v.available_until for v in vehicles), max(s.late for s in problem.stops)), HORIZON_MAX
    )
    # One transit table per service time (travel plus the service at the origin): a courier's
    # own service time, when set, replaces the stops'.
    tables: dict[int | None, int] = {}
    for v in vehicles:
        if v.service not in tables:
            tables[v.service] = routing.RegisterTransitMatrix(_transit_table(problem, size, v.service))
    routing.AddDimensionWithVehicleTransits(
        [tables[v.service] for v in vehicles], horizon, horizon, False, "time"
    )
    time_dim = routing.GetDimensionOrDie("time")
    routing.AddDimensionWithVehicleCapacity(
        routing.RegisterUnaryTransitVector(demand), 0, [int(v.capacity) for v in vehicles], True, "load"
    )
    if problem.weighs:
        weights = [0] * size
        for stop in problem.stops:
            weights[stop.node] = int(stop.weight)
        limits = [UNLIMITED_GRAMS if v.weight_capacity is None else int(v.weight_capacity) for v in vehicles]
        routing.AddDimensionWithVehicleCapacity(
            routing.RegisterUnaryTransitVector(weights), 0, limits, True, "weight"
        )
    _windows_and_penalties(problem, manager, routing, time_dim, horizon)
    if problem.locks:
        _lock_positions(problem, manager, routing, size)
    return _Model(manager, routing, time_dim)


def _lock_positions(problem: Problem, manager: Any, routing: Any, size: int) -> None:
    """A locked stop may only be on its vehicle (or left out), at its position: a dimension
    counting the stops makes the position a cumulative value (the first stop counts 1)."""
    routing.AddDimension(routing.RegisterUnaryTransitVector([1] * size), 0, size + 1, True, "position")
    position = routing.GetDimensionOrDie("position")
    for lock in problem.locks:
        index = manager.NodeToIndex(problem.stops[lock.stop].node)
        routing.VehicleVar(index).SetValues([-1, lock.vehicle])
        position.CumulVar(index).SetRange(lock.index + 1, lock.index + 1)


def _arc_tables(problem: Problem, size: int) -> tuple[list[list[int]], list[int]]:
    """The arc costs and each node's demand, over ``size`` nodes (the extra open-route end costs
    nothing)."""
    n = len(problem.durations)
    cost_matrix = np.zeros((size, size), dtype=np.int64)
    cost_matrix[:n, :n] = np.asarray(problem.cost_matrix, dtype=np.int64)
    demand = [0] * size
    for stop in problem.stops:
        demand[stop.node] = int(stop.demand)
    return cost_matrix.tolist(), demand


def _transit_table(problem: Problem, size: int, vehicle_service: int | None) -> list[list[int]]:
    """Travel plus the service at the origin (the stop's own, or the courier's when given)."""
    n = len(problem.durations)
    duration = np.zeros((size, size), dtype=np.int64)
    duration[:n, :n] = np.asarray(problem.durations, dtype=np.int64)
    service = np.zeros(size, dtype=np.int64)
    for stop in problem.stops:
        service[stop.node] = int(stop.service if vehicle_service is None else vehicle_service)
    return (duration + service[:, None]).tolist()


def _windows_and_penalties(problem: Problem, manager: Any, routing: Any, time_dim: Any, horizon: int) -> None:
    """Each stop's window, optional at a large penalty; each courier's availability, its end
    time minimised once the routes are chosen."""
    for stop in problem.stops:
        index = manager.NodeToIndex(stop.node)
        if problem.allow_late:
            time_dim.CumulVar(index).SetRange(int(min(stop.early, horizon)), horizon)
            time_dim.SetCumulVarSoftUpperBound(index, int(min(stop.late, horizon)), LATE_COST_PER_SECOND)
        else:
            time_dim.CumulVar(index).SetRange(int(stop.early), int(min(stop.late, horizon)))
        routing.AddDisjunction([index], UNSERVED_PENALTY)
    for v, vehicle in enumerate(problem.vehicles):
        time_dim.CumulVar(routing.Start(v)).SetRange(int(vehicle.available_from), int(vehicle.available_from))
        time_dim.CumulVar(routing.End(v)).SetMax(int(min(vehicle.available_until, horizon)))
        routing.AddVariableMinimizedByFinalizer(time_dim.CumulVar(routing.End(v)))


def _search_parameters(first_strategy: str, seconds: float) -> Any:
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, first_strategy)
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.guided_local_search_lambda_coefficient = 0.3
    params.time_limit.FromMilliseconds(max(50, int(seconds * 1000)))
    return params


def _ortools_search(
    model: _Model, problem: Problem, params: Any, seed: list[list[int]] | None
) -> tuple[Any, str]:
    """Guided local search from the seed's routes when it has some, else from OR-Tools' own
    first solution; the seed itself when the search improves on nothing in time. A seed with no
    stop at all is none: PyVRP stopped before its first insertion (a starved budget on a busy
    machine), and searching from it within the same budget would leave every stop out again."""
    routing, manager = model.routing, model.manager
    if seed is not None and any(seed):
        node_routes = [[manager.NodeToIndex(problem.stops[s].node) for s in route] for route in seed]
        initial = routing.ReadAssignmentFromRoutes(node_routes, True)
        if initial is not None:
            solution = routing.SolveFromAssignmentWithParameters(initial, params)
            return (solution if solution is not None else initial), "pyvrp+ortools"
    # The first solution is built to the end whatever the budget: cut short by the time limit,
    # OR-Tools answers with every stop left out (300 stops within 0.2 s: all 300 unassigned; built
    # to the end: 0.3 s, none), which is what a busy machine made of a plan whose road matrix ate
    # the budget. The search then improves on it for what is left.
    started = time.monotonic()
    first = routing.SolveWithParameters(_first_solution_only(params))
    if first is None:
        raise SolverFailed("OR-Tools found no solution")
    left = params.time_limit.ToMilliseconds() - int((time.monotonic() - started) * 1000)
    if left <= 0:
        return first, "ortools"
    params.time_limit.FromMilliseconds(max(50, left))
    solution = routing.SolveFromAssignmentWithParameters(first, params)
    return (solution if solution is not None else first), "ortools"


FIRST_SOLUTION_SECONDS = 60  # a first solution's bound: a thousand stops take seconds, not minutes


def _first_solution_only(params: Any) -> Any:
    """``params`` stopped at the first solution, with room to finish building it."""
    from ortools.constraint_solver import pywrapcp

    first = pywrapcp.DefaultRoutingSearchParameters()
    first.CopyFrom(params)
    first.solution_limit = 1
    first.time_limit.FromSeconds(FIRST_SOLUTION_SECONDS)
    return first


def _ortools_solution(model: _Model, problem: Problem, solution: Any, solver_name: str) -> Solution:
    routing, manager = model.routing, model.manager
    node_to_stop = {stop.node: i for i, stop in enumerate(problem.stops)}
    routes: list[list[int]] = []
    arrivals: list[list[int]] = []
    served: set[int] = set()
    for v in range(len(problem.vehicles)):
        route: list[int] = []
        times: list[int] = []
        index = solution.Value(routing.NextVar(routing.Start(v)))
        while not routing.IsEnd(index):
            stop_number = node_to_stop[manager.IndexToNode(index)]
            route.append(stop_number)
            times.append(solution.Min(model.time.CumulVar(index)))
            served.add(stop_number)
            index = solution.Value(routing.NextVar(index))
        routes.append(route)
        arrivals.append(times)
    unassigned = [i for i in range(len(problem.stops)) if i not in served]
    return Solution(routes, arrivals, unassigned, solution.ObjectiveValue(), solver_name)


# ---------------------------------------------------------------------------------------------
# PyVRP seed


def _pyvrp_routes(
    problem: Problem, time_limit: float, *, deadline: float | None = None
) -> list[list[int]] | None:
    """PyVRP's best routes, one list of stop indices per vehicle (None when it finds none).

    The problem data is built directly from numpy matrices (building it edge by edge through
    ``pyvrp.Model`` costs seconds at 1,000 stops). ``time_limit`` covers building the data and
    the search, not PyVRP's own set-up (its neighbourhoods and first local search, which grow
    with the stops); a ``deadline`` (time.monotonic()) stops the search then, set-up included.
    """
    import pyvrp
    from pyvrp.stop import MaxRuntime

    started = time.monotonic()
    n = len(problem.durations)
    open_routes = any(problem.end(v) is None for v in problem.vehicles)
    size = n + 1 if open_routes else n  # open routes end at a free "anywhere" location
    durations = np.zeros((size, size), dtype=np.int64)
    costs = np.zeros((size, size), dtype=np.int64)
    durations[:n, :n] = np.asarray(problem.durations, dtype=np.int64)
    costs[:n, :n] = np.asarray(problem.cost_matrix, dtype=np.int64)
    locations = [pyvrp.Location(0, 0) for _ in range(size)]

    depot_of: dict[int, int] = {}
    depots: list[Any] = []
    for vehicle in problem.vehicles:
        for node in (vehicle.start, problem.end(vehicle)):
            if node is not None and node not in depot_of:
                depot_of[node] = len(depots)
                depots.append(pyvrp.Depot(location=node))
    end_depot = None
    if open_routes:
        end_depot = len(depots)
        depots.append(pyvrp.Depot(location=n))
    weighs = problem.weighs
    clients = [
        pyvrp.Client(
            location=stop.node,
            delivery=[int(stop.demand), int(stop.weight)] if weighs else [int(stop.demand)],
            service_duration=int(stop.service),
            tw_early=int(stop.early),
            # Lateness allowed: PyVRP (which has no soft window) seeds without the windows' ends.
            tw_late=HORIZON_MAX if problem.allow_late else int(stop.late),
            prize=UNSERVED_PENALTY,
            required=False,
        )
        for stop in problem.stops
    ]
    # One vehicle type per (start, capacity, availability, weight limit, end): PyVRP numbers
    # vehicles by type.
    type_keys: list[tuple[int, int, int, int, int, int]] = []
    members: dict[tuple[int, int, int, int, int, int], list[int]] = {}
    for v, vehicle in enumerate(problem.vehicles):
        weight_limit = UNLIMITED_GRAMS if vehicle.weight_capacity is None else vehicle.weight_capacity
        end_node = problem.end(vehicle)
        key = (
            vehicle.start,
            vehicle.capacity,
            vehicle.available_from,
            vehicle.available_until,
            weight_limit,
            -1 if end_node is None else end_node,  # -1: an open route
        )
        if key not in members:
            type_keys.append(key)
            members[key] = []
        members[key].append(v)
    vehicle_types = [
        pyvrp.VehicleType(
            num_available=len(members[key]),
            capacity=[int(key[1]), int(key[4])] if weighs else [int(key[1])],
            start_depot=depot_of[key[0]],
            end_depot=depot_of[key[5]] if key[5] >= 0 or end_depot is None else end_depot,
            tw_early=int(key[2]),
            tw_late=int(min(key[3], HORIZON_MAX)),
        )
        for key in type_keys
    ]
    matrices: list[Any] = [costs, durations]
    data = pyvrp.ProblemData(locations, clients, depots, vehicle_types, matrices[:1], matrices[1:])
    remaining = max(0.05, time_limit - (time.monotonic() - started))
    if deadline is None:
        result = pyvrp.solve(data, stop=MaxRuntime(remaining), seed=0, collect_stats=False, display=False)
    else:
        result = _pyvrp_until(data, deadline)
    best = result.best
    if not best.is_feasible() and deadline is None:
        return None
    routes: list[list[int]] = [[] for _ in problem.vehicles]
    used: dict[int, int] = {}
    for route in best.routes():
        type_number = route.vehicle_type()
        slot = used.get(type_number, 0)
        used[type_number] = slot + 1
        vehicle_number = members[type_keys[type_number]][slot]
        routes[vehicle_number] = [activity.idx for activity in route.schedule() if activity.is_client()]
    # Stopped at a deadline, PyVRP may not have searched past its (penalised, possibly
    # infeasible) start: the stops that break a courier's capacity or a window are left out.
    return routes if best.is_feasible() else _within_limits(problem, routes)


def _within_limits(problem: Problem, routes: list[list[int]]) -> list[list[int]]:
    """Each route with the stops that would overload the courier, or be reached after their
    window or the courier's day, left out (every stop is optional)."""
    durations = np.asarray(problem.durations, dtype=np.int64)
    kept_routes: list[list[int]] = []
    for vehicle, route in zip(problem.vehicles, routes, strict=True):
        clock, here, load, weight, kept = vehicle.available_from, vehicle.start, 0, 0, []
        for number in route:
            stop = problem.stops[number]
            start = max(clock + int(durations[here, stop.node]), stop.early)
            end = problem.end(vehicle)
            back = 0 if end is None else int(durations[stop.node, end])
            if (
                load + stop.demand > vehicle.capacity
                or (vehicle.weight_capacity is not None and weight + stop.weight > vehicle.weight_capacity)
                or (start > stop.late and not problem.allow_late)
                or start + stop.service + back > vehicle.available_until
            ):
                continue
            kept.append(number)
            clock, here = start + stop.service, stop.node
            load, weight = load + stop.demand, weight + stop.weight
        kept_routes.append(kept)
    return kept_routes


def _pyvrp_until(data: Any, deadline: float) -> Any:
    """pyvrp.solve's steps, started differently and stopped at a deadline that counts its
    set-up. Its usual start, a full local search from a random solution, takes most of a
    one-second budget at 1,000 stops; a full local search from no routes at all (every stop is
    optional, so it inserts them) takes about 60 % of that and serves more stops over less
    distance (yerevan_1000, 30 neighbours: 0.18 s, 706 stops, 4.23 Mm against 0.30 s, 662 stops,
    4.34 Mm). The neighbourhood stays PyVRP's 60 (LARGE_NEIGHBOURS says why)."""
    from pyvrp import IteratedLocalSearch, PenaltyManager, RandomNumberGenerator, Solution
    from pyvrp.search import LocalSearch, NeighbourhoodParams, PerturbationManager, compute_neighbours
    from pyvrp.solve import SolveParams

    params = SolveParams(neighbourhood=NeighbourhoodParams(num_neighbours=LARGE_NEIGHBOURS))
    rng = RandomNumberGenerator(seed=0)
    search = LocalSearch(
        data, rng, compute_neighbours(data, params.neighbourhood), PerturbationManager(params.perturbation)
    )
    for operator in params.operators:
        if operator.supports(data):
            search.add_operator(operator(data))
    penalties = PenaltyManager(params.penalty.midpoint_penalties(data), params.penalty)
    start = search(Solution(data, []), penalties.max_cost_evaluator(), exhaustive=True)
    ils = IteratedLocalSearch(data, penalties, search, start, params.ils)
    return ils.run(_Until(deadline), False, False, params.display_interval)


class _Until:
    """A PyVRP stopping criterion: stop at a time.monotonic() deadline (MaxRuntime starts its
    clock only at the first iteration, after PyVRP's set-up)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline

    def __call__(self, best_cost: float) -> bool:
        return time.monotonic() >= self.deadline
