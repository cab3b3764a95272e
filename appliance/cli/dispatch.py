"""`appliance dispatch export --company ID --kind orders|cash|couriers --from D --to D --out FILE`:
the reports of appliance/dispatch/reports (docs/reports.md) written to a file on the data
directory's dispatch database."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


@click.group("dispatch")
def dispatch_group() -> None:
    """Dispatch reports: exports of orders, cash and courier work."""


@dispatch_group.command("export")
@click.option("--company", "company_id", required=True, type=click.IntRange(min=1), help="The company's id.")
@click.option("--kind", required=True, type=click.Choice(["orders", "cash", "couriers"]))
@click.option(
    "--from", "start", required=True, type=click.DateTime(["%Y-%m-%d"]), help="First day (Yerevan)."
)
@click.option("--to", "end", required=True, type=click.DateTime(["%Y-%m-%d"]), help="Day after the last.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "xlsx"]), help="Default: FILE's extension.")
@click.option(
    "--lang", "lang", type=click.Choice(["hy", "ru", "en"]), default="en", show_default=True,
    help="The workbook's headers, statuses and formats (.xlsx only; the CSV keeps the codes).",
)  # fmt: skip
@command_options
def export_command(
    settings: Settings, as_json: bool, company_id: int, kind: str, start: dt.datetime,
    end: dt.datetime, out: Path, fmt: str | None, lang: str,
) -> None:  # fmt: skip
    """Write one report for [from, to) to FILE (CSV with a BOM, or .xlsx); print a summary."""
    from appliance.cli.company import with_dispatch
    from appliance.common.problems import NotFound
    from appliance.dispatch.models import Company
    from appliance.dispatch.reports import service, writers

    if fmt is None:
        fmt = "xlsx" if out.suffix.lower() == ".xlsx" else "csv"
    try:
        service.utc_bounds(start.date(), end.date())
    except service.RangeError as exc:
        raise click.BadParameter(str(exc), param_hint="'--from'/'--to'") from exc
    partial = out.with_name(out.name + ".part")

    def run() -> dict[str, Any]:
        if Company.get_or_none(Company.id == company_id) is None:
            raise NotFound(f"No company {company_id}.")
        header, rows = service.report(kind, company_id, start.date(), end.date())
        counted = _Counted(rows)
        # Written beside FILE and renamed at the end: a failure leaves no partial FILE.
        with partial.open("wb") as handle:
            if fmt == "xlsx":
                writers.write_xlsx(handle, kind, header, counted, lang)
            else:
                for chunk in writers.csv_chunks(header, counted):
                    handle.write(chunk)
        os.replace(partial, out)
        return {"company": company_id, "kind": kind, "from": start.date().isoformat(),
                "to": end.date().isoformat(), "format": fmt, "rows": counted.n, "out": str(out)}  # fmt: skip

    try:
        result = with_dispatch(settings, run)
    finally:
        partial.unlink(missing_ok=True)
    emit(as_json, result, f"{result['rows']} {kind} rows written to {out}")


class _Counted:
    """Rows passed through, counted."""

    def __init__(self, rows: Any) -> None:
        self.rows = rows
        self.n = 0

    def __iter__(self) -> Any:
        for row in self.rows:
            self.n += 1
            yield row


def register(group: click.Group) -> None:
    group.add_command(dispatch_group)
