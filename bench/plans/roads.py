"""Plan suggestion at scale on the test roads: the wall time of the service's whole suggestion
(orders and couriers read, the travel matrix from the embedded OSRM engine, the solver) against
the solver budget, with each step's share.

Road data: the test extract (Monaco's real roads moved onto Yerevan, tests/data) built with the
real OSRM tools once per run. Orders are scattered over that road area with two-hour windows
over an eight-hour shift; 20 couriers start at the depot.

    python bench/plans/roads.py [--stops 1000] [--budget 1.0] [--runs 3]

The target (issue 14): the answer within the budget plus 10 %. Never part of `make test`.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import connection, write_transaction  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.dispatch.models import Company, Courier, Depot, Order  # noqa: E402
from appliance.dispatch.plans import service  # noqa: E402
from appliance.dispatch.routing.build import build  # noqa: E402
from appliance.dispatch.routing.setup import make_router  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from tests.geo_fixtures import DATA, OFFSET_LAT, OFFSET_LON, translate_extract  # noqa: E402

# Monaco's built-up area, moved as the test extract is.
SOUTH, NORTH = 43.727 + OFFSET_LAT, 43.748 + OFFSET_LAT
WEST, EAST = 7.410 + OFFSET_LON, 7.436 + OFFSET_LON
COURIERS = 20


def prepare(data: Path, stops: int, budget: float):
    settings = load_settings(
        {"data_dir": str(data), "solver_time_limit_seconds": budget, "rate_limits": "off"}, environ={}
    )
    migrate_all(settings)
    from appliance.dispatch.app import create_app

    create_app(settings)  # binds the dispatch database
    pbf = translate_extract(DATA / "monaco.osm.pbf", data / "yerevan.osm.pbf")
    started = time.monotonic()
    build(pbf, data, progress=lambda _line: None)
    print(f"road data built in {time.monotonic() - started:.1f} s")
    rng = random.Random(stops)
    now = clock.now()
    with connection(database), write_transaction(database):
        company = Company.create(name="Bench", created_at=now)
        Depot.create(
            company=company, name="D", address="A", lat=(SOUTH + NORTH) / 2, lon=(WEST + EAST) / 2,
            is_default=True, created_at=now,
        )  # fmt: skip
        for n in range(COURIERS):
            Courier.create(company=company, display_name=f"Courier {n}", created_at=now)
        for n in range(stops):
            opens = now + timedelta(minutes=30 * rng.randrange(0, 12))
            Order.create(
                company=company, public_id=f"B{n:07d}", status="ready", recipient_name="R",
                recipient_phone="+37400000000", address_hy="A",
                lat=rng.uniform(SOUTH, NORTH), lon=rng.uniform(WEST, EAST),
                window_start=opens, window_end=opens + timedelta(hours=2), updated_at=now,
            )  # fmt: skip
    return settings, company.id


STEPS: dict[str, float] = {}


def timed(owner: object, name: str, label: str) -> None:
    """Wrap ``owner.name`` so that each call adds its wall time to STEPS[label]."""
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.monotonic()
        try:
            return inner(*args, **kwargs)
        finally:
            STEPS[label] = STEPS.get(label, 0.0) + time.monotonic() - started

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stops", type=int, default=1000)
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    data = Path(tempfile.mkdtemp(prefix="bench-plans-roads-"))
    settings, company_id = prepare(data, args.stops, args.budget)
    router = make_router(settings)
    router.table([(SOUTH, WEST)], [(NORTH, EAST)])  # load the road data before measuring
    from appliance.dispatch.planning import solver

    timed(service, "_candidates", "read")
    timed(router, "duration_matrix", "matrix")
    timed(service, "_problem", "problem")
    timed(solver, "_pyvrp_routes", "pyvrp")
    timed(solver, "_ortools_model", "ortools model")
    timed(solver, "_ortools_search", "ortools search")
    walls = []
    for run in range(args.runs):
        STEPS.clear()
        started = time.monotonic()
        with connection(database):
            answer = service.suggest(router, settings, company_id, None, None, 60, 3, 8, on_shift=False)
        wall = time.monotonic() - started
        walls.append(wall)
        served = sum(len(r["stops"]) for r in answer["routes"])
        steps = dict(STEPS)
        print(
            f"run {run + 1}: {args.stops} stops, {COURIERS} couriers, budget {args.budget:g} s: "
            f"wall {wall:.2f} s ({wall / args.budget * 100:.0f} % of the budget), {served} served, "
            f"{len(answer['unassigned'])} unassigned, method {answer['method']}"
            + "".join(f", {k} {v:.2f} s" for k, v in steps.items()),
            flush=True,
        )
    median = statistics.median(walls)
    verdict = "within" if median <= args.budget * 1.1 else "OVER"
    print(f"median wall {median:.2f} s for a {args.budget:g} s budget: {verdict} the budget plus 10 %")


if __name__ == "__main__":
    main()
