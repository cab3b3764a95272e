"""`appliance company create|list`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


def with_dispatch(settings: Settings, action: Callable[[], Any]) -> Any:
    """Run ``action`` against an up-to-date dispatch database; Problems become one-line errors."""
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database, connection
    from appliance.common.problems import ApiError
    from appliance.dispatch.db import database

    migrate_all(settings, ["dispatch"])
    bind_database(database, settings.dispatch_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    try:
        with connection(database):
            return action()
    except ApiError as exc:
        raise click.ClickException(exc.detail) from None


@click.group("company")
def company_group() -> None:
    """Dispatch companies."""


@company_group.command("create")
@click.option("--name", required=True)
@click.option("--city", default="Yerevan", show_default=True)
@click.option("--phone", default=None)
@click.option("--owner-email", required=True)
@click.option("--owner-name", required=True)
@click.option(
    "--owner-password", default=None, help="At least 8 characters; without it the owner signs in by link."
)
@click.option("--depot-name", required=True)
@click.option("--depot-address", required=True)
@click.option("--depot-lat", required=True, type=float)
@click.option("--depot-lon", required=True, type=float)
@command_options
def create_command(settings: Settings, as_json: bool, **fields: Any) -> None:
    """Create a company with its owner and default depot."""
    from appliance.dispatch.company.admin import create_company_from_options

    result = with_dispatch(settings, lambda: create_company_from_options(**fields))
    emit(
        as_json,
        result,
        lambda: (
            f"company {result['company']['id']} {result['company']['name']} "
            f"with owner {result['owner']['email']}"
        ),
    )


@company_group.command("list")
@command_options
def list_command(settings: Settings, as_json: bool) -> None:
    """List companies."""
    from appliance.dispatch.company.admin import list_companies

    companies = with_dispatch(settings, list_companies)
    emit(
        as_json,
        {"companies": companies},
        lambda: (
            "\n".join(f"{c['id']}  {c['name']}  plan {c['plan']}  {c['members']} members" for c in companies)
            or "no companies"
        ),
    )


def register(group: click.Group) -> None:
    group.add_command(company_group)
