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

log = logging.getLogger("appliance.planning")

UNSERVED_PENALTY = 10_000_000
HORIZON_MAX = 10 * 24 * 3600


class SolverFailed(Exception):
    """The solver could not produce any plan (answered as 502)."""


@dataclasses.dataclass(frozen=True)
class Vehicle:
    start: int  # node index
    capacity: int
    available_from: int = 0  # seconds from plan start
    available_until: int = HORIZON_MAX


@dataclasses.dataclass(frozen=True)
class Stop:
    node: int
    service: int = 0
    early: int = 0
    late: int = HORIZON_MAX
    demand: int = 1


@dataclasses.dataclass(frozen=True)
class Problem:
    durations: Sequence[Sequence[int]]  # seconds between nodes
    vehicles: Sequence[Vehicle]
    stops: Sequence[Stop]
    costs: Sequence[Sequence[int]] | None = None  # arc costs; durations when None
    return_to_start: bool = False  # couriers end where their last stop is

    @property
    def cost_matrix(self) -> Sequence[Sequence[int]]:
        return self.costs if self.costs is not None else self.durations


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
    # A stop no courier can reach inside its window (the window closes before it opens, or before
    # any courier is available, or opens after every courier's day) is unassigned without asking
    # the solvers: an empty time range makes OR-Tools' model infeasible as a whole.
    earliest = min(v.available_from for v in problem.vehicles)
    latest = max(v.available_until for v in problem.vehicles)
    placeable = [
        i
        for i, stop in enumerate(problem.stops)
        if stop.early <= stop.late and stop.late >= earliest and stop.early <= latest
    ]
    if len(placeable) < len(problem.stops):
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
    started = time.monotonic()
    seed: list[list[int]] | None = None
    if use_seed:
        try:
            seed = _pyvrp_routes(problem, max(0.05, time_limit * seed_share))
        except Exception as exc:  # the seed is an optimisation; OR-Tools alone still answers
            log.warning("PyVRP seed failed: %s", exc)
    remaining = max(0.1, time_limit - (time.monotonic() - started))
    try:
        return _ortools(problem, remaining, first_strategy, seed)
    except SolverFailed:
        raise
    except Exception as exc:  # OR-Tools raises plain exceptions ("CP Solver fail"): a failed solve
        raise SolverFailed(f"OR-Tools: {exc}") from exc


def _restricted(problem: Problem, keep: list[int]) -> Problem:
    """The same problem over the stops numbered in ``keep`` only: nodes that are neither a vehicle
    start nor a kept stop leave the matrices (OR-Tools would otherwise have to visit them)."""
    nodes = sorted({v.start for v in problem.vehicles} | {problem.stops[i].node for i in keep})
    renumber = {node: k for k, node in enumerate(nodes)}

    def sub(matrix: Sequence[Sequence[int]]) -> list[list[int]]:
        return [[matrix[a][b] for b in nodes] for a in nodes]

    return Problem(
        durations=sub(problem.durations),
        vehicles=[dataclasses.replace(v, start=renumber[v.start]) for v in problem.vehicles],
        stops=[dataclasses.replace(problem.stops[i], node=renumber[problem.stops[i].node]) for i in keep],
        costs=None if problem.costs is None else sub(problem.costs),
        return_to_start=problem.return_to_start,
    )


# ---------------------------------------------------------------------------------------------
# OR-Tools


def _ortools(
    problem: Problem, time_limit: float, first_strategy: str, seed: list[list[int]] | None
) -> Solution:
    import numpy as np
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    started = time.monotonic()
    n = len(problem.durations)
    vehicles = problem.vehicles
    # Open routes end at an extra "anywhere" node that costs nothing to reach.
    extra = 0 if problem.return_to_start else 1
    end_node = n
    size = n + extra
    duration = np.zeros((size, size), dtype=np.int64)
    cost_matrix = np.zeros((size, size), dtype=np.int64)
    duration[:n, :n] = np.asarray(problem.durations, dtype=np.int64)
    cost_matrix[:n, :n] = np.asarray(problem.cost_matrix, dtype=np.int64)
    service = np.zeros(size, dtype=np.int64)
    demand = [0] * size
    for stop in problem.stops:
        service[stop.node] = int(stop.service)
        demand[stop.node] = int(stop.demand)
    cost = cost_matrix.tolist()
    transit = (duration + service[:, None]).tolist()  # travel plus the service at the origin

    starts = [v.start for v in vehicles]
    ends = starts if problem.return_to_start else [end_node] * len(vehicles)
    manager = pywrapcp.RoutingIndexManager(size, len(vehicles), starts, ends)
    routing = pywrapcp.RoutingModel(manager)

    cost_index = routing.RegisterTransitMatrix(cost)
    routing.SetArcCostEvaluatorOfAllVehicles(cost_index)
    time_index = routing.RegisterTransitMatrix(transit)
    horizon = max(max(v.available_until for v in vehicles), max(s.late for s in problem.stops))
    horizon = min(horizon, HORIZON_MAX)
    routing.AddDimension(time_index, horizon, horizon, False, "time")
    time_dim = routing.GetDimensionOrDie("time")
    demand_index = routing.RegisterUnaryTransitVector(demand)
    routing.AddDimensionWithVehicleCapacity(
        demand_index, 0, [int(v.capacity) for v in vehicles], True, "load"
    )

    for number, stop in enumerate(problem.stops):
        index = manager.NodeToIndex(stop.node)
        time_dim.CumulVar(index).SetRange(int(stop.early), int(min(stop.late, horizon)))
        routing.AddDisjunction([index], UNSERVED_PENALTY)
        del number
    for v, vehicle in enumerate(vehicles):
        time_dim.CumulVar(routing.Start(v)).SetRange(int(vehicle.available_from), int(vehicle.available_from))
        time_dim.CumulVar(routing.End(v)).SetMax(int(min(vehicle.available_until, horizon)))
        routing.AddVariableMinimizedByFinalizer(time_dim.CumulVar(routing.End(v)))

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, first_strategy)
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.guided_local_search_lambda_coefficient = 0.3
    # The budget covers building the model too.
    params.time_limit.FromMilliseconds(max(50, int((time_limit - (time.monotonic() - started)) * 1000)))

    solution = None
    solver_name = "ortools"
    if seed is not None:
        node_routes = [[manager.NodeToIndex(problem.stops[s].node) for s in route] for route in seed]
        initial = routing.ReadAssignmentFromRoutes(node_routes, True)
        if initial is not None:
            solution = routing.SolveFromAssignmentWithParameters(initial, params)
            solver_name = "pyvrp+ortools"
            if solution is None:
                solution = initial
    if solution is None:
        solution = routing.SolveWithParameters(params)
        solver_name = "ortools"
    if solution is None:
        raise SolverFailed("OR-Tools found no solution")

    node_to_stop = {stop.node: i for i, stop in enumerate(problem.stops)}
    routes: list[list[int]] = []
    arrivals: list[list[int]] = []
    served: set[int] = set()
    for v in range(len(vehicles)):
        route: list[int] = []
        times: list[int] = []
        index = solution.Value(routing.NextVar(routing.Start(v)))
        while not routing.IsEnd(index):
            stop_number = node_to_stop[manager.IndexToNode(index)]
            route.append(stop_number)
            times.append(solution.Min(time_dim.CumulVar(index)))
            served.add(stop_number)
            index = solution.Value(routing.NextVar(index))
        routes.append(route)
        arrivals.append(times)
    unassigned = [i for i in range(len(problem.stops)) if i not in served]
    return Solution(routes, arrivals, unassigned, solution.ObjectiveValue(), solver_name)


# ---------------------------------------------------------------------------------------------
# PyVRP seed


def _pyvrp_routes(problem: Problem, time_limit: float) -> list[list[int]] | None:
    """PyVRP's best routes, one list of stop indices per vehicle (None when it finds none).

    The problem data is built directly from numpy matrices (building it edge by edge through
    ``pyvrp.Model`` costs seconds at 1,000 stops); ``time_limit`` covers building and searching.
    """
    import numpy as np
    import pyvrp
    from pyvrp.stop import MaxRuntime

    started = time.monotonic()
    n = len(problem.durations)
    open_routes = not problem.return_to_start
    size = n + 1 if open_routes else n  # open routes end at a free "anywhere" location
    durations = np.zeros((size, size), dtype=np.int64)
    costs = np.zeros((size, size), dtype=np.int64)
    durations[:n, :n] = np.asarray(problem.durations, dtype=np.int64)
    costs[:n, :n] = np.asarray(problem.cost_matrix, dtype=np.int64)
    locations = [pyvrp.Location(0, 0) for _ in range(size)]

    depot_of: dict[int, int] = {}
    depots: list[Any] = []
    for vehicle in problem.vehicles:
        if vehicle.start not in depot_of:
            depot_of[vehicle.start] = len(depots)
            depots.append(pyvrp.Depot(location=vehicle.start))
    end_depot = None
    if open_routes:
        end_depot = len(depots)
        depots.append(pyvrp.Depot(location=n))
    clients = [
        pyvrp.Client(
            location=stop.node,
            delivery=[int(stop.demand)],
            service_duration=int(stop.service),
            tw_early=int(stop.early),
            tw_late=int(stop.late),
            prize=UNSERVED_PENALTY,
            required=False,
        )
        for stop in problem.stops
    ]
    # One vehicle type per (start, capacity, availability): PyVRP numbers vehicles by type.
    type_keys: list[tuple[int, int, int, int]] = []
    members: dict[tuple[int, int, int, int], list[int]] = {}
    for v, vehicle in enumerate(problem.vehicles):
        key = (vehicle.start, vehicle.capacity, vehicle.available_from, vehicle.available_until)
        if key not in members:
            type_keys.append(key)
            members[key] = []
        members[key].append(v)
    vehicle_types = [
        pyvrp.VehicleType(
            num_available=len(members[key]),
            capacity=[int(key[1])],
            start_depot=depot_of[key[0]],
            end_depot=depot_of[key[0]] if end_depot is None else end_depot,
            tw_early=int(key[2]),
            tw_late=int(min(key[3], HORIZON_MAX)),
        )
        for key in type_keys
    ]
    matrices: list[Any] = [costs, durations]
    data = pyvrp.ProblemData(locations, clients, depots, vehicle_types, matrices[:1], matrices[1:])
    remaining = max(0.05, time_limit - (time.monotonic() - started))
    result = pyvrp.solve(data, stop=MaxRuntime(remaining), seed=0, collect_stats=False, display=False)
    best = result.best
    if not best.is_feasible():
        return None
    routes: list[list[int]] = [[] for _ in problem.vehicles]
    used: dict[int, int] = {}
    for route in best.routes():
        type_number = route.vehicle_type()
        slot = used.get(type_number, 0)
        used[type_number] = slot + 1
        vehicle_number = members[type_keys[type_number]][slot]
        routes[vehicle_number] = [activity.idx for activity in route.schedule() if activity.is_client()]
    return routes
