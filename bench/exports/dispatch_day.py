"""The day accounted: a 2,000-order day (target: each export under 5 s).

    python bench/exports/dispatch_day.py [--orders 2000]

Seeds one company, 20 couriers and N orders of one Yerevan day (delivered, failed, cash on
delivery with collections, pick-up steps) into a fresh data directory, then times
`appliance dispatch export` (in process, the command's own code) for each kind and format.
Prints one line per export, with its time and the peak of Python's allocations during it (the
same at 2,000 and 20,000 orders: the rows stream). Not part of `make test`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from click.testing import CliRunner  # noqa: E402

from appliance.cli import cli  # noqa: E402
from appliance.cli.company import with_dispatch  # noqa: E402
from appliance.common.db import write_transaction  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.dispatch.models import Collection, Company, Courier, Order  # noqa: E402
from appliance.dispatch.models.orders import OrderEvent  # noqa: E402
from appliance.settings import load_settings  # noqa: E402

NINE = datetime(2026, 11, 20, 5, 0, tzinfo=UTC)


def seed(orders: int) -> int:
    with write_transaction(database):
        company = Company.create(name="Bench", city="Yerevan", created_at=NINE)
        couriers = [
            Courier.create(company=company, display_name=f"Առաքիչ {n}", created_at=NINE) for n in range(20)
        ]
        for i in range(orders):
            courier = couriers[i % 20]
            delivered = i % 10 < 8
            finished = NINE + timedelta(minutes=30 + i % 300)
            order = Order.create(
                company=company, public_id=f"B{i:06d}", status="delivered" if delivered else "failed",
                recipient_name="Անի Պետրոսյան", recipient_phone="+37491000000", address_hy="Աբովյան 1",
                lat=40.18, lon=44.51, courier=courier, is_cod=i % 3 == 0, cod_amount_amd=5000,
                window_start=NINE, window_end=NINE + timedelta(hours=3), finished_at=finished,
                failure_reason=None if delivered else "no_answer", created_at=NINE, updated_at=finished,
            )  # fmt: skip
            if delivered:
                OrderEvent.create(order=order, company=company, kind="status", to_status="picked_up",
                                  created_at=finished - timedelta(minutes=25))  # fmt: skip
                if i % 3 == 0:
                    Collection.create(company=company, courier=courier, order=order, amount_amd=5000,
                                      collected_at=finished)  # fmt: skip
        return int(company.id)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--orders", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"data_dir": tmp}, environ={})
        company_id = with_dispatch(settings, lambda: seed(args.orders))
        for kind in ("orders", "cash", "couriers"):
            for fmt in ("csv", "xlsx"):
                out = Path(tmp) / f"{kind}.{fmt}"
                command = ["dispatch", "export", "--company", str(company_id), "--kind", kind,
                           "--from", "2026-11-20", "--to", "2026-11-21", "--out", str(out),
                           "--data-dir", tmp, "--json"]  # fmt: skip
                started = time.perf_counter()
                result = CliRunner().invoke(cli, command)
                took = time.perf_counter() - started
                if result.exit_code != 0:
                    raise SystemExit(result.output)
                # Again, traced (tracing slows it, so not timed): the peak of Python's own
                # allocations during the export. Flat memory: it stays put as the day grows.
                tracemalloc.start()
                CliRunner().invoke(cli, command)
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                print(
                    f"{args.orders} orders, {kind}.{fmt}: {took:.2f} s ({out.stat().st_size} bytes), "
                    f"peak {peak / 1e6:.1f} MB allocated"
                )


if __name__ == "__main__":
    main()
