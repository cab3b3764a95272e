"""The planner on plain data: OR-Tools seeded by PyVRP, optional stops, windows, capacities."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import pytest

from appliance.dispatch.planning.solver import (
    LARGE_PROBLEM_STOPS,
    Problem,
    SolverFailed,
    Stop,
    Vehicle,
    _within_limits,
    solve,
)


def _grid(points: list[tuple[float, float]]) -> list[list[int]]:
    return [[round(math.hypot(a[0] - b[0], a[1] - b[1])) for b in points] for a in points]


def _replay(problem: Problem, route: list[int]) -> list[int]:
    """Arrival seconds along a route recomputed from the matrix (waiting when early)."""
    times, clock, node = [], 0, None
    for number in route:
        stop = problem.stops[number]
        if node is not None:
            clock += problem.stops[node].service
        clock += problem.durations[problem.stops[node].node if node is not None else 0][stop.node]
        clock = max(clock, stop.early)
        times.append(clock)
        node = number
    return times


def _random_problem(stops: int, vehicles: int, capacity: int, seed: int) -> Problem:
    rng = random.Random(seed)
    points = [(0.0, 0.0)] + [(rng.uniform(-3000, 3000), rng.uniform(-3000, 3000)) for _ in range(stops)]
    windows = []
    for _ in range(stops):
        start = rng.randrange(0, 20000, 600)
        windows.append((start, start + 7200))
    return Problem(
        durations=_grid(points),
        vehicles=[Vehicle(start=0, capacity=capacity, available_until=30000) for _ in range(vehicles)],
        stops=[Stop(node=i + 1, service=300, early=w[0], late=w[1]) for i, w in enumerate(windows)],
    )


@pytest.mark.parametrize("use_seed", [True, False], ids=["portfolio", "ortools_alone"])
def test_every_planned_stop_respects_its_window_and_each_courier_its_capacity(use_seed: bool) -> None:
    problem = _random_problem(stops=40, vehicles=4, capacity=12, seed=7)
    solution = solve(problem, time_limit=0.5, use_seed=use_seed)
    assert solution.solver == ("pyvrp+ortools" if use_seed else "ortools")
    planned = [s for route in solution.routes for s in route]
    assert sorted(planned + solution.unassigned) == list(range(40))
    assert len(planned) == len(set(planned))
    for route, arrivals in zip(solution.routes, solution.arrivals, strict=True):
        assert len(route) <= 12
        assert arrivals == _replay(problem, route)
        for stop_number, arrival in zip(route, arrivals, strict=True):
            stop = problem.stops[stop_number]
            assert stop.early <= arrival <= stop.late


def test_stops_beyond_the_fleets_capacity_are_listed_unassigned_instead_of_failing() -> None:
    problem = _random_problem(stops=10, vehicles=2, capacity=3, seed=1)
    solution = solve(problem, time_limit=0.3)
    assert sum(len(r) for r in solution.routes) == 6
    assert len(solution.unassigned) == 4


def test_a_stop_whose_window_opens_after_the_shift_is_unassigned_and_the_rest_still_planned() -> None:
    points = [(0, 0), (100, 0), (200, 0), (300, 0)]
    problem = Problem(
        durations=_grid(points),
        vehicles=[Vehicle(start=0, capacity=5, available_until=1000)],
        stops=[
            Stop(node=1, early=0, late=500),
            Stop(node=2, early=5000, late=1000),  # opens after it closes
            Stop(node=3, early=2000, late=3000),  # opens after the courier's day
        ],
    )
    for use_seed in (True, False):
        solution = solve(problem, time_limit=0.2, use_seed=use_seed)
        assert solution.routes == [[0]]
        assert solution.arrivals == [[100]]
        assert solution.unassigned == [1, 2]


def test_the_planner_visits_nearby_stops_in_a_sensible_order() -> None:
    # Five stops on a line: any order but the line itself costs more.
    points = [(0, 0)] + [(100 * k, 0) for k in (3, 1, 5, 2, 4)]
    problem = Problem(
        durations=_grid(points),
        vehicles=[Vehicle(start=0, capacity=10)],
        stops=[Stop(node=i) for i in range(1, 6)],
    )
    solution = solve(problem, time_limit=0.3)
    visited = [points[problem.stops[s].node][0] for s in solution.routes[0]]
    assert visited == [100, 200, 300, 400, 500]
    assert solution.cost == 500


def test_open_routes_end_at_the_last_stop_and_round_trips_come_back() -> None:
    points = [(0, 0), (1000, 0)]
    stops = [Stop(node=1)]
    open_route = solve(Problem(_grid(points), [Vehicle(0, 1)], stops), time_limit=0.1)
    round_trip = solve(Problem(_grid(points), [Vehicle(0, 1)], stops, return_to_start=True), time_limit=0.1)
    assert open_route.cost == 1000 and round_trip.cost == 2000


def test_couriers_start_from_their_own_positions() -> None:
    # Two couriers at either end of a street; each takes the stops on its side.
    points = [(0, 0), (10000, 0), (500, 0), (1000, 0), (9000, 0), (9500, 0)]
    problem = Problem(
        durations=_grid(points),
        vehicles=[Vehicle(start=0, capacity=5), Vehicle(start=1, capacity=5)],
        stops=[Stop(node=n) for n in (2, 3, 4, 5)],
    )
    solution = solve(problem, time_limit=0.3)
    sides = [{points[problem.stops[s].node][0] < 5000 for s in route} for route in solution.routes]
    assert sides == [{True}, {False}]
    assert set(itertools.chain(*solution.routes)) == {0, 1, 2, 3}


def test_without_couriers_the_solver_fails_with_its_own_error() -> None:
    with pytest.raises(SolverFailed):
        solve(Problem([[0]], [], []), time_limit=0.1)


def test_a_large_problem_is_planned_by_pyvrp_against_the_deadline_within_every_limit() -> None:
    problem = _random_problem(stops=LARGE_PROBLEM_STOPS + 20, vehicles=6, capacity=40, seed=11)
    solution = solve(problem, time_limit=0.5)
    assert solution.solver == "pyvrp"
    planned = [s for route in solution.routes for s in route]
    assert sorted(planned + solution.unassigned) == list(range(LARGE_PROBLEM_STOPS + 20))
    assert len(planned) == len(set(planned))
    assert len(planned) > 6 * 20  # a real plan, not the empty start
    for route, arrivals in zip(solution.routes, solution.arrivals, strict=True):
        assert len(route) <= 40
        assert arrivals == _replay(problem, route)
        for stop_number, arrival in zip(route, arrivals, strict=True):
            stop = problem.stops[stop_number]
            assert stop.early <= arrival <= stop.late


def test_stops_past_a_couriers_capacity_window_or_day_are_left_out_of_an_unsearched_route() -> None:
    problem = Problem(
        durations=_grid([(0, 0), (100, 0), (200, 0), (300, 0), (400, 0)]),
        vehicles=[Vehicle(start=0, capacity=2, available_until=1000)],
        stops=[
            Stop(node=1, late=50),  # reached at 100: its window has closed
            Stop(node=2),
            Stop(node=3),
            Stop(node=4),  # a third stop: over capacity
        ],
    )
    assert _within_limits(problem, [[0, 1, 2, 3]]) == [[1, 2]]
    day = dataclasses.replace(problem, vehicles=[Vehicle(start=0, capacity=9, available_until=350)])
    assert _within_limits(day, [[1, 2, 3]]) == [[1, 2]]  # the last stop would end after the day


def test_a_budget_eaten_by_a_slow_matrix_still_places_every_stop_that_fits() -> None:
    """On a busy machine the road matrix can leave the solver its 50 ms floor: OR-Tools cut short
    while building its first solution answers with every stop left out. The first solution is
    built to the end whatever the budget, and the search improves on it for what is left."""
    problem = _random_problem(stops=300, vehicles=15, capacity=30, seed=3)
    solution = solve(problem, time_limit=0.0, use_seed=False)
    assert solution.solver == "ortools"
    assert solution.unassigned == []  # room for 450: every stop placed


def test_an_empty_seed_from_a_starved_pyvrp_is_ignored_and_every_stop_still_placed() -> None:
    """PyVRP stopped before its first insertion hands over empty routes; a search from them with
    what is left of the budget would leave every stop out."""
    from appliance.dispatch.planning.solver import _ortools, _with_arrays

    problem = _with_arrays(_random_problem(stops=300, vehicles=15, capacity=30, seed=3))
    solution = _ortools(problem, 0.0, "PARALLEL_CHEAPEST_INSERTION", [[] for _ in problem.vehicles])
    assert solution.solver == "ortools"
    assert solution.unassigned == []
