"""The large-problem path (PyVRP against the deadline) on bench/day's day of 1,000 orders on the
test roads (issue 45): half the orders with three-hour windows, 20 couriers of 60 from 09:00 to
17:00. Over 30 neighbours per stop its first local search ended with time warp and the deadline's
repair left 40 orders out; over 60 that search alone places every order, so the assertion holds
whatever the machine's speed (the budget is spent after it)."""

from __future__ import annotations

import random

import numpy as np

from appliance.dispatch.planning.solver import Problem, Stop, Vehicle, solve
from appliance.dispatch.routing.setup import make_router
from appliance.settings import load_settings
from tests.geo_fixtures import OFFSET_LAT, OFFSET_LON

SOUTH, NORTH = 43.727 + OFFSET_LAT, 43.748 + OFFSET_LAT
WEST, EAST = 7.410 + OFFSET_LON, 7.436 + OFFSET_LON
HOUR = 3600


def day_of_1000(routed_data_dir) -> Problem:
    """bench/day's 1,000 orders (the same random draws), in seconds from midnight."""
    rng = random.Random(1000)
    stops, points = [], [((SOUTH + NORTH) / 2, (WEST + EAST) / 2)] * 20
    for n in range(1000):
        early, late = 0, 17 * HOUR
        if n % 2 == 0:
            early = (9 + rng.randrange(0, 6)) * HOUR
            late = early + 3 * HOUR
        points.append((rng.uniform(SOUTH, NORTH), rng.uniform(WEST, EAST)))
        stops.append(Stop(node=20 + n, service=300, early=early, late=late))
    router = make_router(load_settings({"data_dir": str(routed_data_dir)}, environ={}))
    durations = np.rint(router.duration_matrix(points).seconds).astype(np.int64)
    couriers = [
        Vehicle(start=k, capacity=60, available_from=9 * HOUR, available_until=17 * HOUR) for k in range(20)
    ]
    return Problem(durations, couriers, stops)


def test_a_day_of_1000_orders_with_windows_is_planned_whole_on_the_large_problem_path(
    routed_data_dir,
) -> None:
    problem = day_of_1000(routed_data_dir)
    solution = solve(problem, time_limit=2.0)
    assert solution.solver == "pyvrp"
    assert solution.unassigned == []
    for route, arrivals in zip(solution.routes, solution.arrivals, strict=True):
        assert len(route) <= 60
        for number, arrival in zip(route, arrivals, strict=True):
            assert problem.stops[number].early <= arrival <= problem.stops[number].late
