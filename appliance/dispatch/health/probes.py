"""Readiness probes of the dispatch engines that have no area of their own yet: the route solver
and the map tiles. Each does real work: the solver solves a small routing problem, the tiles
probe reads a real tile."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import requests

from appliance.common.health import Check, Probe


def solver_probe() -> Check:
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    matrix = [[0, 5, 9], [5, 0, 4], [9, 4, 0]]
    manager = pywrapcp.RoutingIndexManager(3, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    transit = routing.RegisterTransitMatrix(matrix)
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.time_limit.FromMilliseconds(500)
    solution = routing.SolveWithParameters(params)
    if solution is None:
        return Check("fail", "OR-Tools found no solution to the probe problem")
    return Check("pass", data={"engine": "ortools"})


def tiles_probe(data_dir: Path, tiles_url: str) -> Probe:
    def probe() -> Check:
        if tiles_url:
            # Zoom 0 covers the whole world: every tile server has it.
            url = tiles_url.replace("{z}", "0").replace("{x}", "0").replace("{y}", "0")
            response = requests.get(url, timeout=5)
            if response.status_code != 200 or not response.content:
                return Check("fail", f"tile server answered {response.status_code}")
            return Check("pass", data={"source": "url"})
        path = Path(data_dir) / "tiles.mbtiles"
        if not path.exists():
            return Check("not_built", "no map tiles built: run `appliance map build --pbf FILE`")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT tile_data FROM tiles LIMIT 1").fetchone()
        if row is None or not row[0]:
            return Check("fail", "the MBTiles file holds no tiles")
        return Check("pass", data={"source": "mbtiles"})

    return probe
