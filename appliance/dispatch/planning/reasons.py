"""Why the planner left a stop out: each dropped stop checked against the constraints.

The solver only says which stops it left out. The reason is worked out afterwards, honestly, by
checking the stop against every courier: no road reaches it from any start (``unreachable``); it
is too heavy or one stop too many for every courier's room (``capacity``); no courier could serve
it even alone, inside its window (``window``) or before its shift ends (``shift_end``). A stop some
courier could have served alone was crowded out: ``capacity`` when every such courier's lane is
full, else the time ran out (``window`` for a stop with a window, ``shift_end`` without one).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from appliance.dispatch.planning.solver import Problem, Solution, Stop, Vehicle


def reasons(
    problem: Problem,
    solution: Solution,
    windowed: Collection[int],
    unreachable: np.ndarray | None = None,
) -> dict[int, str]:
    """The reason each stop in ``solution.unassigned`` was left out, by stop index. ``windowed``:
    the stops with a delivery window; ``unreachable``: the matrix's pairs without a road."""
    durations = np.asarray(problem.durations, dtype=np.int64)
    loads = [_load(problem, route) for route in solution.routes]
    return {s: _reason(problem, durations, loads, s, s in windowed, unreachable) for s in solution.unassigned}


def _load(problem: Problem, route: list[int]) -> tuple[int, int]:
    """The stops (demand) and the grams a lane carries."""
    return sum(problem.stops[s].demand for s in route), sum(problem.stops[s].weight for s in route)


def _reason(
    problem: Problem,
    durations: np.ndarray,
    loads: list[tuple[int, int]],
    s: int,
    windowed: bool,
    unreachable: np.ndarray | None,
) -> str:
    stop = problem.stops[s]
    vehicles = list(enumerate(problem.vehicles))
    if unreachable is not None and all(unreachable[v.start, stop.node] for _, v in vehicles):
        return "unreachable"
    roomy = [(k, v) for k, v in vehicles if _room(v, stop, 0, 0)]
    if not roomy:
        return "capacity"
    alone = [(k, v) for k, v in roomy if _in_time(problem, durations, v, stop)]
    if not alone:
        shift_allows = any(_before_shift_end(problem, durations, v, stop) for _, v in roomy)
        return "window" if windowed and shift_allows else "shift_end"
    if all(not _room(v, stop, *loads[k]) for k, v in alone):
        return "capacity"
    return "window" if windowed else "shift_end"


def _room(vehicle: Vehicle, stop: Stop, stops_used: int, weight_used: int) -> bool:
    if stops_used + stop.demand > vehicle.capacity:
        return False
    return vehicle.weight_capacity is None or weight_used + stop.weight <= vehicle.weight_capacity


def _arrival(durations: np.ndarray, vehicle: Vehicle, stop: Stop) -> int:
    return max(vehicle.available_from + int(durations[vehicle.start, stop.node]), stop.early)


def _before_shift_end(problem: Problem, durations: np.ndarray, vehicle: Vehicle, stop: Stop) -> bool:
    """The courier, starting at its start, could serve the stop (ignoring its window's end) and
    be done (back at its end, when it has one) before its shift ends."""
    done = _arrival(durations, vehicle, stop) + problem.service(vehicle, stop)
    end = problem.end(vehicle)
    if end is not None:
        done += int(durations[stop.node, end])
    return done <= vehicle.available_until


def _in_time(problem: Problem, durations: np.ndarray, vehicle: Vehicle, stop: Stop) -> bool:
    on_time = problem.allow_late or _arrival(durations, vehicle, stop) <= stop.late
    return on_time and _before_shift_end(problem, durations, vehicle, stop)
