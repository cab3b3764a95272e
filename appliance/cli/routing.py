"""`appliance routing build`: road data for the embedded routing engine."""

from __future__ import annotations

from pathlib import Path

import click

from appliance.cli._options import command_options, emit, input_file
from appliance.settings import Settings


@click.group("routing")
def routing_group() -> None:
    """Road routing data."""


@routing_group.command("build")
@click.option("--pbf", "pbf", required=True, type=input_file(), help="OpenStreetMap extract (.osm.pbf).")
@command_options
def build_command(pbf: Path, settings: Settings, as_json: bool) -> None:
    """Build the road-routing data from an OpenStreetMap extract into the data directory."""
    from appliance.dispatch.routing.build import BuildError, build

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        info = build(pbf, settings.data_dir, progress=lambda line: click.echo(line, err=True))
    except BuildError as exc:
        raise click.ClickException(str(exc)) from None
    emit(as_json, {"routing": info}, f"road data built from {info['source']} in {info['seconds']} s")


def register(group: click.Group) -> None:
    group.add_command(routing_group)
