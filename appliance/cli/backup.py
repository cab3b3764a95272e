"""backup, backup verify and restore: a consistent online copy of a data directory, a restore
drill by hand, and its restore."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from appliance.cli._options import command_options, emit, output_path, settings_from
from appliance.settings import Settings

if TYPE_CHECKING:
    from appliance.backup import Unlock
    from appliance.common.sealing import Sealer


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
        f"{result['bytes']} bytes, {_encryption_words(result['encryption'])}; databases: {databases}"
    )


PASSPHRASE_ENV = "APPLIANCE_BACKUP_PASSPHRASE"
NO_PASSPHRASE = (
    f"the backup is encrypted under a passphrase: give --passphrase-file FILE or {PASSPHRASE_ENV}, "
    "or run the command on a terminal to be asked"
)
NO_ENCRYPTION_CHOSEN = (
    f"a backup is encrypted: give --recipient age1… (restore with its identity file), "
    f"--passphrase-file FILE or {PASSPHRASE_ENV}, or run on a terminal to be asked; "
    "--no-encryption writes it in the clear"
)


def stdin_is_terminal() -> bool:
    """Whether a person can be asked (a function of this module, so tests can stand in for one)."""
    return sys.stdin is not None and sys.stdin.isatty()


def _passphrase_from_file(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise click.BadParameter(f"{path}: {why}", param_hint="'--passphrase-file'") from None
    passphrase = text.rstrip("\r\n")  # a file's final newline is no part of the passphrase
    if not passphrase:
        raise click.BadParameter(f"{path} is empty", param_hint="'--passphrase-file'")
    return passphrase


def _given_passphrase(passphrase_file: Path | None, *, confirm: bool) -> str | None:
    """The backup passphrase from --passphrase-file, the environment or the terminal, in that
    order (never from the command line, which every local user reads in ``ps``); None if none."""
    if passphrase_file is not None:
        return _passphrase_from_file(passphrase_file)
    if os.environ.get(PASSPHRASE_ENV):
        return os.environ[PASSPHRASE_ENV]
    if stdin_is_terminal():
        return str(click.prompt("Backup passphrase", hide_input=True, confirmation_prompt=confirm, err=True))
    return None


def backup_sealer(
    recipients: tuple[str, ...], passphrase_file: Path | None, no_encryption: bool
) -> Sealer | None:
    """How `backup` seals: to the recipients, under a passphrase, or (only when asked) not at all."""
    from appliance.common.sealing import Sealer, SealingError

    if sum((bool(recipients), passphrase_file is not None, no_encryption)) > 1:
        raise click.UsageError("give one of --recipient, --passphrase-file and --no-encryption")
    if no_encryption:
        return None
    try:
        if recipients:
            return Sealer.for_recipients(recipients)
    except SealingError as exc:
        raise click.BadParameter(str(exc), param_hint="'--recipient'") from None
    passphrase = _given_passphrase(passphrase_file, confirm=True)
    if passphrase is None:
        raise click.UsageError(NO_ENCRYPTION_CHOSEN)
    if not passphrase:
        raise click.UsageError("the backup passphrase is empty")
    return Sealer.with_passphrase(passphrase)


def _encryption_words(scheme: str | None) -> str:
    return {None: "NOT encrypted", "passphrase": "encrypted under the passphrase"}.get(
        scheme, "encrypted to the recipient"
    )


@click.group("backup", invoke_without_command=True, subcommand_metavar="[verify PATH]")
@click.option(
    "--out",
    "out",
    default=None,
    type=output_path(),
    help="A new directory to write the backup to (required unless a subcommand is given).",
)
@click.option(
    "--recipient",
    "recipients",
    multiple=True,
    metavar="AGE1…",
    help="Encrypt to this age public key (repeatable); restore with its identity file.",
)
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, resolve_path=True, path_type=Path),
    help=f"Encrypt under the passphrase in this file (else {PASSPHRASE_ENV}, else asked on a terminal).",
)
@click.option(
    "--no-encryption",
    is_flag=True,
    help="Write the backup in the clear (it then opens the live install: keep it as secret as the keys).",
)
@command_options
@click.pass_context
def backup_command(
    ctx: click.Context,
    out: Path | None,
    recipients: tuple[str, ...],
    passphrase_file: Path | None,
    no_encryption: bool,
    settings: Settings,
    as_json: bool,
) -> None:
    """Copy the data directory (databases, chain, objects, keys), encrypted, while the appliance serves.

    `appliance backup verify PATH` restores a backup into a scratch directory and checks it (a
    restore drill by hand)."""
    from appliance.backup import BackupError, create_backup

    if ctx.invoked_subcommand is not None:
        return
    if out is None:
        raise click.UsageError("Missing option '--out'.")
    sealer = backup_sealer(recipients, passphrase_file, no_encryption)
    try:
        with _progress_bar("backup") as progress:
            manifest = create_backup(settings, out, sealer=sealer, progress=progress)
    except BackupError as exc:
        raise click.ClickException(str(exc)) from None
    encryption = manifest["encryption"]
    result = {
        "path": str(out.resolve()),
        "createdAt": manifest["createdAt"],
        "seconds": manifest["seconds"],
        "bytes": sum(entry["size"] for entry in manifest["files"]),
        "applianceVersion": manifest["applianceVersion"],
        "encryption": None if encryption is None else encryption["scheme"],
        "databases": manifest["databases"],
        "chainHeights": manifest["chainHeights"],
        "files": manifest["files"],
        "custodyKey": manifest["custodyKey"],
    }
    emit(as_json, result, lambda: _describe_backup(result))
    if sealer is None:
        click.echo(
            "warning: this backup is not encrypted: with appliance.key and the databases in the clear, "
            "whoever reads it can act as any user and sign as any operator; keep it as secret as "
            "the data directory",
            err=True,
        )
    if manifest["custodyKey"].startswith("left out"):
        click.echo(
            "warning: custody.key is not encrypted, so it is not in this backup: keep its 24 words "
            "apart (or run `appliance custody encrypt`); a restore without them has no wallets",
            err=True,
        )


def restore_unlock(
    passphrase_file: Path | None, identity_files: tuple[Path, ...], allow_unencrypted: bool = False
) -> Unlock:
    """What may open the backup: identities from files, and a passphrase found only if needed. A
    secret given on purpose (a file, the variable, an identity) means the backup must be encrypted,
    unless ``allow_unencrypted``."""
    from appliance.backup import Unlock
    from appliance.common.sealing import SealingError, WrongSecret, read_identities

    identities: list[str] = []
    for path in identity_files:
        try:
            identities.extend(read_identities(path))
        except SealingError as exc:
            raise click.BadParameter(str(exc), param_hint="'--identity'") from None

    def passphrase() -> str:
        found = _given_passphrase(passphrase_file, confirm=False)
        if not found:
            raise WrongSecret(NO_PASSPHRASE)
        return found

    given = passphrase_file is not None or bool(os.environ.get(PASSPHRASE_ENV)) or bool(identities)
    return Unlock(
        passphrase=passphrase,
        identities=tuple(identities),
        expects_encryption=given and not allow_unencrypted,
    )


def _unlock_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--passphrase-file and --identity: how `restore` and `backup verify` open a backup."""
    fn = click.option(
        "--allow-unencrypted",
        is_flag=True,
        help="Accept a backup in the clear although a passphrase or identity is given.",
    )(fn)
    fn = click.option(
        "--identity",
        "identity_files",
        multiple=True,
        type=click.Path(exists=True, dir_okay=False, resolve_path=True, path_type=Path),
        help="An age identity file (AGE-SECRET-KEY-1…) for a backup encrypted to its recipient.",
    )(fn)
    return click.option(
        "--passphrase-file",
        type=click.Path(exists=True, dir_okay=False, resolve_path=True, path_type=Path),
        help=f"The backup's passphrase in this file (else {PASSPHRASE_ENV}, else asked on a terminal).",
    )(fn)


@click.command("restore")
@click.argument("source", type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path))
@_unlock_options
@command_options
def restore_command(
    source: Path,
    passphrase_file: Path | None,
    identity_files: tuple[Path, ...],
    allow_unencrypted: bool,
    settings: Settings,
    as_json: bool,
) -> None:
    """Restore a backup into an empty data directory (--data-dir), checking every checksum."""
    from appliance.backup import BackupError, restore_backup

    unlock = restore_unlock(passphrase_file, identity_files, allow_unencrypted)
    try:
        with _progress_bar("restore") as progress:
            result = restore_backup(
                source,
                settings.data_dir,
                lambda target: settings_from(data_dir=str(target)),
                unlock=unlock,
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


@backup_command.command("verify")
@click.argument("where", metavar="PATH")
@_unlock_options
@command_options
def verify_command(
    where: str,
    passphrase_file: Path | None,
    identity_files: tuple[Path, ...],
    allow_unencrypted: bool,
    settings: Settings,
    as_json: bool,
) -> None:
    """Restore a backup (a directory, or s3://BUCKET/PREFIX/NAME) into a scratch directory and
    check it as a restore drill does; exit 1 when it fails."""
    from appliance.backups.drill import drill, scratch_directory
    from appliance.backups.storage import StorageError, resolve

    unlock = restore_unlock(passphrase_file, identity_files, allow_unencrypted)
    with scratch_directory(settings.data_dir) as scratch:
        try:
            label, source = resolve(settings, where, scratch / "fetched")
        except StorageError as exc:
            raise click.ClickException(str(exc)) from None
        if not source.is_dir():
            raise click.ClickException(f"{where}: no such backup directory")
        result = drill(source, scratch, unlock, label=label)
    emit(as_json, result.as_json(), lambda: _describe_drill(result.as_json()))
    if not result.passed:
        sys.exit(1)


def _describe_drill(result: dict[str, Any]) -> str:
    outcome = "passed" if result["passed"] else "FAILED"
    lines = [f"{result['backup']}: restore drill {outcome} in {result['seconds']} s"]
    lines += [f"  {c['check']}: {c['status']} ({c['detail']})" for c in result["checks"]]
    return "\n".join(lines)


def register(group: click.Group) -> None:
    group.add_command(backup_command)
    group.add_command(restore_command)
