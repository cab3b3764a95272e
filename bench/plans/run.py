"""Plan quality benchmark: our planner against VROOM and PyVRP on the same inputs, same budget.

Instances: Solomon (100 customers) and Gehring & Homberger (200 customers) in vrptw/ (travel
time = Euclidean distance, scaled x100 to integers; distances reported unscaled), and generated
Yerevan-like instances (50, 200, 1000 stops, road-like detour, windows, capacities).

    python bench/plans/run.py                      # all Solomon + 12 Homberger + generated, 1 s
    python bench/plans/run.py --budgets 1 5 --all  # the full sweep
    python bench/plans/run.py --only C101 R101      # chosen instances

Per instance it prints vehicles, total distance, unassigned, wall time and the gap to the best
known; at the end the mean and median gap per solver and budget. Never part of `make test`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

from appliance.dispatch.planning.solver import Problem, Stop, Vehicle, solve  # noqa: E402

SCALE = 100


def read_instance(path: Path) -> dict:
    lines = path.read_text().split("\n")
    vehicles = capacity = None
    rows = []
    for i, line in enumerate(lines):
        if line.strip().startswith("NUMBER"):
            vehicles, capacity = map(int, lines[i + 1].split())
        parts = line.split()
        if len(parts) == 7 and all(p.replace(".", "").isdigit() for p in parts):
            rows.append([float(p) for p in parts])
    xy = [(r[1], r[2]) for r in rows]
    return {
        "name": path.stem.upper() if path.parent.name == "solomon" else path.stem,
        "vehicles": vehicles,
        "capacity": capacity,
        "xy": xy,
        "demand": [int(r[3]) for r in rows],
        "ready": [int(r[4]) for r in rows],
        "due": [int(r[5]) for r in rows],
        "service": [int(r[6]) for r in rows],
    }


def euclid(xy: list[tuple[float, float]]) -> list[list[float]]:
    return [[math.hypot(a[0] - b[0], a[1] - b[1]) for b in xy] for a in xy]


def route_distance(routes: list[list[int]], dist: list[list[float]], depot_return: bool = True) -> float:
    total = 0.0
    for route in routes:
        if not route:
            continue
        path = [0, *route, 0] if depot_return else [0, *route]
        total += sum(dist[a][b] for a, b in itertools.pairwise(path))
    return total


def check_feasible(inst: dict, routes: list[list[int]], dist: list[list[float]]) -> bool:
    """Recompute arrivals with exact distances (0.011 time-unit tolerance from scaling)."""
    for route in routes:
        load = sum(inst["demand"][c] for c in route)
        if load > inst["capacity"]:
            return False
        t, prev = 0.0, 0
        for c in route:
            t = max(t + dist[prev][c], inst["ready"][c])
            if t > inst["due"][c] + 0.011 * len(route):
                return False
            t += inst["service"][c]
            prev = c
    return True


# -- solvers -----------------------------------------------------------------------------------


def ours(inst: dict, dist: list[list[float]], budget: float) -> list[list[int]]:
    n = len(inst["xy"])
    matrix = [[int(round(d * SCALE)) for d in row] for row in dist]
    stops = [
        Stop(
            node=i,
            service=inst["service"][i] * SCALE,
            early=inst["ready"][i] * SCALE,
            late=inst["due"][i] * SCALE,
            demand=inst["demand"][i],
        )
        for i in range(1, n)
    ]
    vehicles = [Vehicle(0, inst["capacity"], 0, inst["due"][0] * SCALE) for _ in range(inst["vehicles"])]
    solution = solve(Problem(matrix, vehicles, stops, return_to_start=True), time_limit=budget)
    return [[stops[s].node for s in route] for route in solution.routes]


def pyvrp_alone(inst: dict, dist: list[list[float]], budget: float) -> list[list[int]]:
    import pyvrp
    from pyvrp.stop import MaxRuntime

    model = pyvrp.Model()
    locs = [model.add_location(x, y) for x, y in inst["xy"]]
    depot = model.add_depot(locs[0], tw_early=0, tw_late=inst["due"][0] * SCALE)
    model.add_vehicle_type(
        num_available=inst["vehicles"],
        capacity=[inst["capacity"]],
        start_depot=depot,
        end_depot=depot,
        tw_early=0,
        tw_late=inst["due"][0] * SCALE,
    )
    for i in range(1, len(locs)):
        model.add_client(
            locs[i],
            delivery=[inst["demand"][i]],
            service_duration=inst["service"][i] * SCALE,
            tw_early=inst["ready"][i] * SCALE,
            tw_late=inst["due"][i] * SCALE,
        )
    for i, a in enumerate(locs):
        for j, b in enumerate(locs):
            d = int(round(dist[i][j] * SCALE))
            model.add_edge(a, b, distance=d, duration=d)
    best = model.solve(stop=MaxRuntime(budget), display=False, collect_stats=False).best
    return [[a.idx + 1 for a in r.schedule() if a.is_client()] for r in best.routes()]


def vroom_alone(inst: dict, dist: list[list[float]], budget: float) -> list[list[int]]:
    import vroom

    matrix = np.array([[int(round(d * SCALE)) for d in row] for row in dist], dtype=np.uint32)
    problem = vroom.Input()
    problem.set_durations_matrix(profile="car", matrix_input=matrix)
    problem.add_vehicle(
        [
            vroom.Vehicle(
                v + 1,
                start=0,
                end=0,
                capacity=[inst["capacity"]],
                time_window=vroom.TimeWindow(0, inst["due"][0] * SCALE),
            )
            for v in range(inst["vehicles"])
        ]
    )
    problem.add_job(
        [
            vroom.Job(
                i,
                location=i,
                default_service=inst["service"][i] * SCALE,
                delivery=[inst["demand"][i]],
                time_windows=[vroom.TimeWindow(inst["ready"][i] * SCALE, inst["due"][i] * SCALE)],
            )
            for i in range(1, len(inst["xy"]))
        ]
    )
    solution = problem.solve(exploration_level=5, nb_threads=1, timeout=timedelta(seconds=budget))
    return [
        [s["location_index"] for s in r["steps"] if s["type"] == "job"] for r in solution.to_dict()["routes"]
    ]


SOLVERS = {"ours": ours, "vroom": vroom_alone, "pyvrp": pyvrp_alone}


# -- generated Yerevan-like instances ------------------------------------------------------------


def yerevan_instance(stops: int, seed: int) -> dict:
    """Stops scattered over a 12 x 10 km city (units: metres / 10 m/s driving = seconds x 10),
    one depot in the centre, 2-hour delivery windows over a 10-hour day, 15 stops per courier."""
    rng = random.Random(seed)
    xy = [(6000.0, 5000.0)] + [(rng.uniform(0, 12000), rng.uniform(0, 10000)) for _ in range(stops)]
    day = 36000
    ready, due = [0], [day]
    for _ in range(stops):
        start = rng.randrange(0, day - 7200, 1800)
        ready.append(start // 10)
        due.append((start + 7200) // 10)
    return {
        "name": f"yerevan_{stops}",
        "vehicles": max(2, stops // 12),
        "capacity": 15,
        "xy": [(x / 10, y / 10) for x, y in xy],  # 10 m units so that 1 unit = 1 s at 36 km/h
        "demand": [0] + [1] * stops,
        "ready": ready,
        "due": [d if i else day // 10 for i, d in enumerate(due)],
        "service": [0] + [30] * stops,  # 5 minutes in 10-second units
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budgets", type=float, nargs="+", default=[1.0])
    parser.add_argument("--all", action="store_true", help="every Solomon and Homberger instance")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS))
    parser.add_argument("--no-generated", action="store_true")
    args = parser.parse_args()

    bks = json.loads((ROOT / "vrptw" / "BKS.json").read_text())
    files = sorted((ROOT / "vrptw" / "solomon").glob("*.txt"))
    homberger = sorted((ROOT / "vrptw" / "homberger_200").glob("*.txt"))
    files += homberger if args.all else homberger[::5]
    instances = [read_instance(f) for f in files]
    if not args.no_generated and args.only is None:
        instances += [yerevan_instance(n, seed=n) for n in (50, 200, 1000)]
    if args.only:
        instances = [i for i in instances if i["name"] in args.only]

    gaps: dict[tuple[str, float], list[float]] = {}
    header = f"{'instance':<12} {'budget':>6} {'solver':<6} {'veh':>4} {'distance':>10} {'unasg':>5} {'wall s':>7} {'gap %':>7}"
    print(header)
    print("-" * len(header))
    for inst in instances:
        dist = euclid(inst["xy"])
        best = bks.get(inst["name"] + "_distance", bks.get(inst["name"], {})).get("best_known_cost")
        for budget in args.budgets:
            if inst["name"] == "yerevan_1000" and budget < 5:
                pass
            for solver in args.solvers:
                started = time.monotonic()
                try:
                    routes = [r for r in SOLVERS[solver](inst, dist, budget) if r]
                except Exception as exc:  # report and go on: one solver's failure is a figure too
                    print(f"{inst['name']:<12} {budget:>6.1f} {solver:<6} failed: {exc}")
                    continue
                wall = time.monotonic() - started
                served = {c for r in routes for c in r}
                unassigned = len(inst["xy"]) - 1 - len(served)
                distance = route_distance(routes, dist)
                feasible = check_feasible(inst, routes, dist)
                gap = (distance / best - 1) * 100 if best and unassigned == 0 and feasible else None
                if gap is not None:
                    gaps.setdefault((solver, budget), []).append(gap)
                gap_text = f"{gap:7.2f}" if gap is not None else ("    n/a" if best is None else "  infsb")
                print(
                    f"{inst['name']:<12} {budget:>6.1f} {solver:<6} {len(routes):>4} {distance:>10.2f} "
                    f"{unassigned:>5} {wall:>7.2f} {gap_text}",
                    flush=True,
                )
    print()
    print(f"{'solver':<8} {'budget':>6} {'n':>4} {'mean gap %':>11} {'median gap %':>13}")
    for (solver, budget), values in sorted(gaps.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(
            f"{solver:<8} {budget:>6.1f} {len(values):>4} {statistics.mean(values):>11.2f} "
            f"{statistics.median(values):>13.2f}"
        )


if __name__ == "__main__":
    main()
