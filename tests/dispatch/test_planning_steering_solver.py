"""The planner's steering on plain data (issue 45): per-courier lane ends, weights, service
times, locks, soft windows, and the reasons it gives for what it leaves out. Both real solvers."""

from __future__ import annotations

import numpy as np
import pytest

from appliance.dispatch.planning.reasons import reasons
from appliance.dispatch.planning.solver import Lock, Problem, Stop, Vehicle, solve

# Node 0: the courier's start; 1, 2: stops; 3: the depot, far from everything.
DURATIONS = [
    [0, 100, 200, 900],
    [100, 0, 100, 900],
    [200, 100, 0, 900],
    [900, 900, 900, 0],
]


@pytest.mark.parametrize("use_seed", [True, False], ids=["pyvrp_seed", "ortools_alone"])
def test_a_lane_that_ends_at_the_depot_must_be_back_there_before_its_shift_ends(use_seed) -> None:
    stops = [Stop(node=1), Stop(node=2)]
    open_lane = Problem(DURATIONS, [Vehicle(start=0, capacity=5, available_until=1000)], stops)
    assert solve(open_lane, time_limit=0.3, use_seed=use_seed).unassigned == []
    back = Problem(DURATIONS, [Vehicle(start=0, capacity=5, available_until=1000, end=3)], stops)
    solution = solve(back, time_limit=0.3, use_seed=use_seed)
    # Stop 1 then back (100 + 900) fits the 1,000 s; both stops (200 + 900) do not.
    assert solution.routes == [[0]] and solution.unassigned == [1]
    assert reasons(back, solution, windowed=set()) == {1: "shift_end"}


@pytest.mark.parametrize("use_seed", [True, False], ids=["pyvrp_seed", "ortools_alone"])
def test_a_weight_limit_leaves_the_heavy_stop_out_for_capacity(use_seed) -> None:
    stops = [Stop(node=1, weight=50_000), Stop(node=2, weight=5_000)]
    problem = Problem(DURATIONS, [Vehicle(start=0, capacity=5, weight_capacity=20_000)], stops)
    solution = solve(problem, time_limit=0.3, use_seed=use_seed)
    assert solution.routes == [[1]] and solution.unassigned == [0]
    assert reasons(problem, solution, windowed=set()) == {0: "capacity"}


def test_a_courier_s_own_service_time_counts_between_its_stops() -> None:
    stops = [Stop(node=1, service=60), Stop(node=2, service=60)]
    problem = Problem(DURATIONS, [Vehicle(start=0, capacity=5, service=600)], stops)
    solution = solve(problem, time_limit=0.3)
    assert solution.routes == [[0, 1]] and solution.arrivals == [[100, 800]]


def test_locked_stops_keep_their_vehicle_and_position() -> None:
    stops = [Stop(node=1), Stop(node=2)]
    vehicles = [Vehicle(start=0, capacity=5), Vehicle(start=0, capacity=5)]
    problem = Problem(DURATIONS, vehicles, stops, locks=[Lock(stop=0, vehicle=1, index=1), Lock(1, 1, 0)])
    solution = solve(problem, time_limit=0.3)
    assert solution.routes == [[], [1, 0]]


def test_a_missed_window_is_served_late_only_when_lateness_is_allowed() -> None:
    stops = [Stop(node=2, early=0, late=50)]  # 200 s away, closing at 50 s
    strict = Problem(DURATIONS, [Vehicle(start=0, capacity=5)], stops)
    solution = solve(strict, time_limit=0.3)
    assert solution.unassigned == [0] and reasons(strict, solution, windowed={0}) == {0: "window"}
    lenient = Problem(DURATIONS, [Vehicle(start=0, capacity=5)], stops, allow_late=True)
    assert solve(lenient, time_limit=0.3).arrivals == [[200]]


def test_a_stop_no_road_reaches_is_unplaced_as_unreachable() -> None:
    stops = [Stop(node=1), Stop(node=2)]
    problem = Problem(DURATIONS, [Vehicle(start=0, capacity=1)], stops)
    solution = solve(problem, time_limit=0.3)
    no_road = np.zeros((4, 4), dtype=bool)
    no_road[0, 2] = True  # the router filled this pair with the straight-line estimate
    dropped = solution.unassigned[0]
    expected = "unreachable" if dropped == 1 else "capacity"
    assert reasons(problem, solution, windowed=set(), unreachable=no_road) == {dropped: expected}
