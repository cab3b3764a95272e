"""A dispatcher's day planned (issue 45): 300 orders across 15 couriers and 1,000 across 20, for
tomorrow, on the test roads, through the service's own suggestion (`plans/service.py: suggest`,
the travel matrix from the embedded OSRM engine), compared with PyVRP alone on the very same
problem (the same road matrix, windows, shifts and capacities: the `Problem` the suggestion built).

Road data: the test extract (Monaco's real roads moved onto Yerevan, tests/data) built with the
real OSRM tools once per run. Orders are scattered over that road area; half have a three-hour
delivery window between 09:00 and 17:00, half none. Couriers start at the depot at 09:00 for eight
hours (a later day's defaults), five minutes at each door, lanes ending at their last stop.

    python bench/day/run.py [--sizes 300 1000] [--budgets 10 30]

Printed per size and solver: wall time, orders placed and unplaced (with the planner's reasons),
total driving time, the couriers' idle time (waiting for a window to open), late stops and the
courier-hours used. The issue's targets: every order placed that can be, 300 orders within 10 s of
solver time and 1,000 within 30 s. Part of `make bench`; never of `make test`.
"""

from __future__ import annotations

import argparse
import collections
import logging
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import connection, write_transaction  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.dispatch.models import Company, Courier, Depot, Order  # noqa: E402
from appliance.dispatch.planning import solver  # noqa: E402
from appliance.dispatch.plans import service  # noqa: E402
from appliance.dispatch.routing.build import build  # noqa: E402
from appliance.dispatch.routing.setup import make_router  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from tests.geo_fixtures import DATA, OFFSET_LAT, OFFSET_LON, translate_extract  # noqa: E402

# Monaco's built-up area, moved as the test extract is.
SOUTH, NORTH = 43.727 + OFFSET_LAT, 43.748 + OFFSET_LAT
WEST, EAST = 7.410 + OFFSET_LON, 7.436 + OFFSET_LON
COURIERS = {300: 15, 1000: 20}
CAPACITY = {300: 25, 1000: 60}
SERVICE_MINUTES = 5
SHIFT_HOURS = 8


def prepare(data: Path) -> None:
    settings = load_settings({"data_dir": str(data), "rate_limits": "off"}, environ={})
    migrate_all(settings)
    from appliance.dispatch.app import create_app

    create_app(settings)  # binds the dispatch database
    pbf = translate_extract(DATA / "monaco.osm.pbf", data / "yerevan.osm.pbf")
    started = time.monotonic()
    build(pbf, data, progress=lambda _line: None)
    print(f"road data built in {time.monotonic() - started:.1f} s", flush=True)


def day_of_orders(size: int, day) -> int:
    """A company with its depot, couriers and ``size`` ready orders for ``day``; its id."""
    rng = random.Random(size)
    now = clock.now()
    with connection(database), write_transaction(database):
        company = Company.create(name=f"Day {size}", created_at=now)
        Depot.create(
            company=company, name="D", address="A", lat=(SOUTH + NORTH) / 2, lon=(WEST + EAST) / 2,
            is_default=True, created_at=now,
        )  # fmt: skip
        for n in range(COURIERS[size]):
            Courier.create(company=company, display_name=f"Courier {n}", created_at=now)
        for n in range(size):
            start = end = None
            if n % 2 == 0:  # half with a three-hour window opening on the hour, 09:00 to 14:00
                start = datetime.combine(day, datetime.min.time(), tzinfo=clock.YEREVAN) + timedelta(
                    hours=9 + rng.randrange(0, 6)
                )
                end = start + timedelta(hours=3)
            Order.create(
                company=company, public_id=f"D{size}{n:06d}", status="ready", recipient_name="R",
                recipient_phone="+37400000000", address_hy="A",
                lat=rng.uniform(SOUTH, NORTH), lon=rng.uniform(WEST, EAST),
                window_start=start, window_end=end, updated_at=now,
            )  # fmt: skip
    return company.id


CAPTURED: dict[str, object] = {}


def capture_problem() -> None:
    """Keep the Problem the suggestion builds (and which order each stop is), for PyVRP alone."""
    inner = service._problem

    def wrapper(matrix, candidates, *args, **kwargs):
        problem = inner(matrix, candidates, *args, **kwargs)
        CAPTURED["problem"] = problem
        CAPTURED["order_ids"] = [str(o.id) for o in candidates.orders]
        return problem

    service._problem = wrapper


def measure(problem: solver.Problem, routes: list[list[int]]) -> dict[str, float]:
    """Drive each route on the problem's own matrix: driving, waiting for windows, late stops."""
    durations = problem.durations
    driving = idle = late = used = 0
    over = 0
    for vehicle, route in zip(problem.vehicles, routes, strict=True):
        if not route:
            continue
        t, node = vehicle.available_from, vehicle.start
        over += max(0, len(route) - vehicle.capacity)
        for index in route:
            stop = problem.stops[index]
            leg = int(durations[node][stop.node])
            t += leg
            driving += leg
            if t < stop.early:
                idle += stop.early - t
                t = stop.early
            if t > stop.late:
                late += 1
            t += vehicle.service if vehicle.service is not None else stop.service
            node = stop.node
        used += t - vehicle.available_from
    placed = sum(len(r) for r in routes)
    return {"placed": placed, "driving": driving, "idle": idle, "late": late, "used": used, "over": over}


def line(name: str, size: int, wall: float, figures: dict[str, float], extra: str = "") -> str:
    hours = lambda s: f"{s / 3600:.1f} h"  # noqa: E731
    return (
        f"{size:>5} orders  {name:<7} wall {wall:6.2f} s  placed {figures['placed']:>4}  "
        f"unplaced {size - figures['placed']:>4}  driving {hours(figures['driving']):>7}  "
        f"idle {hours(figures['idle']):>7}  late {figures['late']:>3}  courier time {hours(figures['used']):>7}"
        + (f"  over capacity {figures['over']}" if figures["over"] else "")
        + extra
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--budgets", type=float, nargs="+", default=[10.0, 30.0])
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    data = Path(tempfile.mkdtemp(prefix="bench-day-"))
    prepare(data)
    capture_problem()
    tomorrow = (clock.now().astimezone(clock.YEREVAN) + timedelta(days=1)).date()
    for size, budget in zip(args.sizes, args.budgets, strict=True):
        COURIERS.setdefault(size, 20)
        CAPACITY.setdefault(size, max(10, size // COURIERS[size] + 10))
        company_id = day_of_orders(size, tomorrow)
        settings = load_settings(
            {"data_dir": str(data), "solver_time_limit_seconds": budget, "rate_limits": "off"}, environ={}
        )
        router = make_router(settings)
        router.table([(SOUTH, WEST)], [(NORTH, EAST)])  # load the road data before measuring
        options = service.PlanOptions(day=tomorrow)
        started = time.monotonic()
        with connection(database):
            answer = service.suggest(
                router, settings, company_id, None, None, CAPACITY[size], SERVICE_MINUTES, SHIFT_HOURS,
                on_shift=False, options=options,
            )  # fmt: skip
        wall = time.monotonic() - started
        problem = CAPTURED["problem"]
        stop_of = {order_id: i for i, order_id in enumerate(CAPTURED["order_ids"])}
        ours = [[stop_of[s["orderId"]] for s in route["stops"]] for route in answer["routes"]]
        reasons = collections.Counter(u["reason"] for u in answer["unplaced"])
        why = ("  reasons " + ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))) if reasons else ""
        print(
            f"{size} orders, {COURIERS[size]} couriers (capacity {CAPACITY[size]}, {SHIFT_HOURS} h from 09:00, "
            f"{SERVICE_MINUTES} min a stop), budget {budget:g} s, matrix {answer['method']}",
            flush=True,
        )
        print(line("ours", size, wall, measure(problem, ours), why), flush=True)
        started = time.monotonic()
        alone = solver._pyvrp_routes(problem, budget) or [[] for _ in problem.vehicles]
        wall = time.monotonic() - started
        print(line("PyVRP", size, wall, measure(problem, alone), "  (solver alone, same matrix)"), flush=True)


if __name__ == "__main__":
    main()
