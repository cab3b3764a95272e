"""Readiness probes of the dispatch engines that have no area of their own yet: the route solver
and the map tiles. Each does real work: the solver solves a small routing problem, the tiles
probe reads a real tile."""

from __future__ import annotations

import gzip
from pathlib import Path

import requests

from appliance.common.health import Check, Probe
from appliance.dispatch.tiles.mbtiles import centre, lonlat_to_tile, probe_tile, read_metadata, tiles_path

# Longitude and latitude of central Yerevan: where an external tile server must have tiles.
PROBE_CENTRE = (44.5126, 40.1776)


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
    """Reads a real tile from the configured source: from <data_dir>/tiles.mbtiles (the most
    detailed tile at the centre of the built area), or from the tile server of ``tiles_url`` (the
    zoom-12 tile at the centre of the built area when there is one, else at the centre of Yerevan).
    The tile must be a non-empty vector tile (gzip or plain protobuf)."""

    def probe() -> Check:
        path = tiles_path(data_dir)
        if tiles_url:
            lon, lat = (centre(read_metadata(path)) if path.exists() else None) or PROBE_CENTRE
            z = 12
            x, y = lonlat_to_tile(lon, lat, z)
            url = tiles_url.replace("{z}", str(z)).replace("{x}", str(x)).replace("{y}", str(y))
            response = requests.get(url, timeout=5)
            if response.status_code != 200 or not response.content:
                return Check("fail", f"the tile server answered {response.status_code} for {z}/{x}/{y}")
            return Check("pass", data={"source": "url", "tile": f"{z}/{x}/{y}"})
        if not path.exists():
            return Check("not_built", "no map tiles built: run `appliance map build --pbf FILE`")
        tile, meta = probe_tile(path, PROBE_CENTRE)
        if tile is None:
            return Check("fail", "the MBTiles file holds no tiles")
        z, x, y, data = tile
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        # A vector tile is a protobuf whose first field is a layer (field 3, length-delimited).
        if not data or data[0] != 0x1A:
            return Check("fail", f"tile {z}/{x}/{y} is not a vector tile")
        return Check(
            "pass",
            data={"source": "mbtiles", "tile": f"{z}/{x}/{y}", "builtAt": meta.get("appliance:builtAt")},
        )

    return probe
