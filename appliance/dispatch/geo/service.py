"""The geo proxies' rules: road answers with the straight-line fallback, and a single-courier
trip optimised by the planner."""

from __future__ import annotations

from typing import Any

from appliance.common.problems import BadGateway
from appliance.dispatch.planning.solver import Problem, SolverFailed, Stop, Vehicle, solve
from appliance.dispatch.routing.engines import Point, Router


def route(router: Router, points: list[Point]) -> dict[str, Any]:
    result = router.route(points)
    return {
        "code": "Ok",
        "method": result.method,
        "routes": [
            {
                "duration": round(result.duration_s, 1),
                "distance": round(result.distance_m, 1),
                "geometry": result.geometry,
                "legs": [{"duration": round(d, 1), "distance": round(m, 1)} for d, m in result.legs],
            }
        ],
    }


def matrix(router: Router, sources: list[Point], destinations: list[Point]) -> dict[str, Any]:
    table = router.table(sources, destinations)
    return {
        "code": "Ok",
        "method": table.method,
        "durations": [[round(v or 0.0, 1) for v in row] for row in table.durations],
        "distances": [[round(v or 0.0, 1) for v in row] for row in table.distances],
    }


def optimize(
    router: Router, start: Point, stops: list[Point], *, roundtrip: bool, service_s: int, time_limit: float
) -> dict[str, Any]:
    points = [start, *stops]
    table = router.table(points, points)
    durations = [[round(v or 0) for v in row] for row in table.durations]
    problem = Problem(
        durations=durations,
        vehicles=[Vehicle(start=0, capacity=len(stops))],
        stops=[Stop(node=i + 1, service=service_s) for i in range(len(stops))],
        return_to_start=roundtrip,
    )
    try:
        solution = solve(problem, time_limit=min(time_limit, 1.0), use_seed=len(stops) > 8)
    except SolverFailed as exc:
        raise BadGateway(f"The route solver failed: {exc}") from None
    order = solution.routes[0]
    path = [start] + [stops[i] for i in order] + ([start] if roundtrip else [])
    trip = router.route(path) if len(path) > 1 else None
    return {
        "code": "Ok",
        "method": table.method if trip is None else trip.method,
        "trips": [
            {
                "duration": round(trip.duration_s if trip else 0.0, 1),
                "distance": round(trip.distance_m if trip else 0.0, 1),
                "geometry": trip.geometry if trip else "",
            }
        ],
        "waypoints": [
            {
                "stopIndex": stop,
                "waypointIndex": position + 1,
                "arrivalSeconds": solution.arrivals[0][position],
            }
            for position, stop in enumerate(order)
        ],
    }
