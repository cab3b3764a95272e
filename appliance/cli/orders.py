"""`appliance orders import FILE --company ID [--dry-run] [--status ready|draft] [--json]`: the same import as
POST /orders/import (appliance/dispatch/orders/importing.py), run on the data directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


@click.group("orders")
def orders_group() -> None:
    """Dispatch orders."""


@orders_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--company", "company_id", required=True, type=click.IntRange(min=1), help="The company's id.")
@click.option("--dry-run", is_flag=True, help="Check every row and print the counts; create nothing.")
@click.option(
    "--status",
    type=click.Choice(["ready", "draft"]),
    default=None,
    help="What the orders arrive as (default: the company's import status, ready unless changed).",
)
@command_options
def import_command(
    settings: Settings, as_json: bool, file: Path, company_id: int, dry_run: bool, status: str | None
) -> None:
    """Import a day's orders from a CSV (UTF-8) or .xlsx file; exit 1 when any row is refused."""
    from appliance.cli.company import with_dispatch
    from appliance.common.keys import load_or_create_master_key
    from appliance.common.problems import NotFound
    from appliance.dispatch.geocoding.search import company_geocoder
    from appliance.dispatch.models import Company
    from appliance.dispatch.orders import importing
    from appliance.dispatch.routing.setup import make_router

    data = file.read_bytes()
    master_key = load_or_create_master_key(settings.data_dir)

    def run() -> dict[str, Any]:
        company = Company.get_or_none(Company.id == company_id)
        if company is None:
            raise NotFound(f"No company {company_id}.")
        geocode = company_geocoder(settings.data_dir, company_id)  # rows with an address only
        ready = (status or company.import_status) == "ready"
        return importing.import_file(
            company_id,
            None,
            data,
            master_key,
            dry_run=dry_run,
            geocode=geocode,
            ready=ready,
            router=make_router(settings),  # the fee's road distance (docs/fees.md)
        )

    result = with_dispatch(settings, run)
    emit(as_json, result, lambda: _summary(result, dry_run))
    if result["refused"]:
        raise SystemExit(1)


def _summary(result: dict[str, Any], dry_run: bool) -> str:
    verb = "would create" if dry_run else "created"
    lines = [f"{verb} {result['created']}, existing {result['existing']}, refused rows "
             f"{len({r['row'] for r in result['refused']})}"]  # fmt: skip
    lines += [f"row {r['row']} {r['column'] or ''}: {r['message']}" for r in result["refused"]]
    return "\n".join(lines)


def register(group: click.Group) -> None:
    group.add_command(orders_group)
