"""Readiness probes of the dispatch engines that have no area of their own yet: the route solver
and the map tiles. Each does real work: the solver solves a small routing problem, the tiles
probe reads a real tile."""

from __future__ import annotations

import contextlib
import gzip
from pathlib import Path

import requests

from appliance.common.health import Check, Probe

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
        from appliance.dispatch.tiles.build import lonlat_to_tile, open_mbtiles, tiles_path

        path = tiles_path(data_dir)
        if tiles_url:
            lon, lat = PROBE_CENTRE
            if path.exists():
                with open_mbtiles(path) as conn:
                    meta = dict(conn.execute("SELECT name, value FROM metadata").fetchall())
                with contextlib.suppress(KeyError, ValueError):
                    lon, lat = (float(v) for v in meta["center"].split(",")[:2])
            z = 12
            x, y = lonlat_to_tile(lon, lat, z)
            url = tiles_url.replace("{z}", str(z)).replace("{x}", str(x)).replace("{y}", str(y))
            response = requests.get(url, timeout=5)
            if response.status_code != 200 or not response.content:
                return Check("fail", f"the tile server answered {response.status_code} for {z}/{x}/{y}")
            return Check("pass", data={"source": "url", "tile": f"{z}/{x}/{y}"})
        if not path.exists():
            return Check("not_built", "no map tiles built: run `appliance map build --pbf FILE`")
        with open_mbtiles(path) as conn:
            meta = dict(conn.execute("SELECT name, value FROM metadata").fetchall())
            z = int(meta.get("maxzoom", 14))
            try:
                lon, lat = (float(v) for v in meta["center"].split(",")[:2])
            except (KeyError, ValueError):
                lon, lat = PROBE_CENTRE
            x, y = lonlat_to_tile(lon, lat, z)
            row = (
                conn.execute(
                    "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles"
                    " WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?",
                    (z, x, 2**z - 1 - y),
                ).fetchone()
                or conn.execute(
                    "SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles"
                    " ORDER BY zoom_level DESC LIMIT 1"
                ).fetchone()
            )
        if row is None:
            return Check("fail", "the MBTiles file holds no tiles")
        z, x, tms_y, data = row
        data = bytes(data or b"")
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        # A vector tile is a protobuf whose first field is a layer (field 3, length-delimited).
        if not data or data[0] != 0x1A:
            return Check("fail", f"tile {z}/{x}/{2**z - 1 - tms_y} is not a vector tile")
        return Check(
            "pass",
            data={
                "source": "mbtiles",
                "tile": f"{z}/{x}/{2**z - 1 - tms_y}",
                "builtAt": meta.get("appliance:builtAt"),
            },
        )

    return probe
