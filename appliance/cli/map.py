"""`appliance map build`: vector map tiles for the tracking page."""

from __future__ import annotations

from pathlib import Path

import click

from appliance.cli._options import command_options, emit, input_file
from appliance.settings import Settings


@click.group("map")
def map_group() -> None:
    """Map tiles."""


@map_group.command("build")
@click.option("--pbf", "pbf", required=True, type=input_file(), help="OpenStreetMap extract (.osm.pbf).")
@command_options
def build_command(pbf: Path, settings: Settings, as_json: bool) -> None:
    """Build the vector map tiles (MBTiles) from an OpenStreetMap extract into the data directory.

    Progress goes to standard error; <data_dir>/tiles.mbtiles is replaced only once the new file
    is complete, so a running server keeps serving the previous tiles until then."""
    from appliance.dispatch.tiles.build import TilesBuildError, build

    try:
        info = build(pbf, settings.data_dir, progress=lambda line: click.echo(line, err=True))
    except TilesBuildError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"map build failed: {exc}") from None
    emit(
        as_json,
        {"tiles": info},
        (
            f"map tiles built from {info['source']} in {info['seconds']} s"
            f" (zoom {info['minZoom']}..{info['maxZoom']}, {info['builtAt']})"
        ),
    )


def register(group: click.Group) -> None:
    group.add_command(map_group)
