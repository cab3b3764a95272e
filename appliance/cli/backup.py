"""backup and restore: a consistent online copy of a data directory, and its restore."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit, output_path, settings_from
from appliance.settings import Settings


@contextmanager
def _progress_bar(description: str) -> Iterator[Callable[[int], Callable[[int], None]]]:
    """A byte-counting bar on standard error (hidden when it is not a terminal, as under systemd)."""
    from tqdm import tqdm

    bars: list[Any] = []

    def start(total: int) -> Callable[[int], None]:
        bar = tqdm(
            total=total,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=description,
            file=sys.stderr,
            disable=None,
        )
        bars.append(bar)
        return bar.update

    try:
        yield start
    finally:
        for bar in bars:
            bar.close()


def _describe_backup(result: dict[str, Any]) -> str:
    databases = ", ".join(
        f"{name} ({entry['backend']}, schema {entry['schemaVersion']})"
        for name, entry in result["databases"].items()
    )
    return (
        f"backup written to {result['path']} in {result['seconds']} s: {len(result['files'])} files, "
        f"{result['bytes']} bytes; databases: {databases}"
    )


@click.command("backup")
@click.option(
    "--out",
    "out",
    required=True,
    type=output_path(),
    help="A new directory to write the backup to.",
)
@command_options
def backup_command(out: Path, settings: Settings, as_json: bool) -> None:
    """Copy the data directory (databases, chain, objects, keys) while the appliance serves."""
    from appliance.common.backup import BackupError, create_backup

    try:
        with _progress_bar("backup") as progress:
            manifest = create_backup(settings, out, progress=progress)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    result = {
        "path": str(out.resolve()),
        "createdAt": manifest["createdAt"],
        "seconds": manifest["seconds"],
        "bytes": sum(entry["size"] for entry in manifest["files"]),
        "applianceVersion": manifest["applianceVersion"],
        "databases": manifest["databases"],
        "chainHeights": manifest["chainHeights"],
        "files": manifest["files"],
        "custodyKey": manifest["custodyKey"],
    }
    emit(as_json, result, lambda: _describe_backup(result))
    if manifest["custodyKey"].startswith("left out"):
        click.echo(
            "warning: custody.key is not encrypted, so it is not in this backup: keep its 24 words "
            "apart (or run `appliance custody encrypt`); a restore without them has no wallets",
            err=True,
        )


@click.command("restore")
@click.argument("source", type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path))
@command_options
def restore_command(source: Path, settings: Settings, as_json: bool) -> None:
    """Restore a backup into an empty data directory (--data-dir), checking every checksum."""
    from appliance.common.backup import BackupError, restore_backup

    try:
        with _progress_bar("restore") as progress:
            result = restore_backup(
                source,
                settings.data_dir,
                lambda target: settings_from(data_dir=str(target)),
                progress=progress,
            )
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    emit(
        as_json,
        result,
        lambda: (
            f"restored the backup of {result['createdAt']} into {result['dataDir']} in {result['seconds']} s "
            f"(dispatch schema {result['dispatch']['schemaVersion']}, engine schema "
            f"{result['engine']['schemaVersion']}); start it with "
            f"appliance serve --data-dir {result['dataDir']}"
        ),
    )


def register(group: click.Group) -> None:
    group.add_command(backup_command)
    group.add_command(restore_command)
