"""`appliance reports rebuild`: the report projection rebuilt from the whole event log, on the data
directory's engine database (docs/engine-reports.md). Safe while `serve` runs: the rebuild holds
the projection's lease, and the serving projector goes on from where the rebuild ended."""

from __future__ import annotations

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


@click.group("reports")
def reports_group() -> None:
    """The engine's report projection."""


@reports_group.command("rebuild")
@command_options
def rebuild_command(settings: Settings, as_json: bool) -> None:
    """Drop the report projection and build it again from every event."""
    from appliance.cli.admin import migrate_all
    from appliance.common import clock
    from appliance.common.db import bind_database, connection
    from appliance.engine.db import database
    from appliance.engine.models import Projection, ReportRow
    from appliance.engine.reports.projector import NAME, ReportProjector

    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    with connection(database):
        try:
            applied = ReportProjector().rebuild()
        except RuntimeError:  # the cursor moved under it: a second rebuild started meanwhile
            raise click.ClickException(
                "another rebuild of the report projection started meanwhile; it finishes the work"
            ) from None
        state = Projection.get_by_id(NAME)
        result = {
            "events": applied,
            "rows": ReportRow.select().count(),
            "builtThrough": clock.iso(state.built_through),
        }
    emit(
        as_json,
        result,
        f"report projection rebuilt: {result['events']} events, {result['rows']} rows, "
        f"built through {result['builtThrough']}",
    )


def register(group: click.Group) -> None:
    group.add_command(reports_group)
