"""How a command fails: one line ``error: <what happened and what to do>`` on standard error.

Exit status (the operations specification): 0 success, 2 a usage error (an unknown option, a
bad value, an input file that is missing or unreadable), 1 any other failure. No traceback unless
``--debug`` (before or after the command's name) or ``APPLIANCE_DEBUG=1``: then the traceback
comes first and the same error line last.

Known failures are described here once, for every command (a port in use, a database locked by
another process, a data directory that cannot be written, …), so that the commands themselves
raise what they raise. Nothing here is imported by the engines: ``appliance --version`` still
imports no command module.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from typing import Any

import click

USAGE = 2
FAILURE = 1

_debug_flag = False


def set_debug(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """Callback of every --debug flag (the group's and each command's)."""
    global _debug_flag
    if value:
        _debug_flag = True


def debug_enabled() -> bool:
    return _debug_flag or os.environ.get("APPLIANCE_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}


def reset_debug() -> None:
    """Forget a --debug of an earlier run in the same process (CliRunner runs many)."""
    global _debug_flag
    _debug_flag = False


def one_line(text: str) -> str:
    """A message folded onto one line (a tool's multi-line output joined with " | ")."""
    return " | ".join(part.strip() for part in str(text).splitlines() if part.strip())


def _usage(exc: click.UsageError) -> str:
    message = exc.format_message()
    ctx = exc.ctx
    if ctx is not None:
        return f"{message} (see '{ctx.command_path} --help')"
    return message


def _os_error(exc: OSError) -> str:
    where = exc.filename or ""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EADDRINUSE:
        return (
            f"an address is already in use ({reason}): another server (perhaps another appliance) "
            "listens on that port; stop it or give other ports (--dispatch-port, --engine-port)"
        )
    if exc.errno in {errno.EACCES, errno.EPERM, errno.EROFS}:
        return (
            f"{where}: not writable ({reason}): give a data directory this user may write to "
            "(--data-dir or APPLIANCE_DATA_DIR)"
        )
    if exc.errno == errno.ENOSPC:
        return f"{where}: no space left on the device: free some space and run the command again"
    if isinstance(exc, FileNotFoundError | NotADirectoryError):
        return f"{where}: {reason}: check the path (and that its folder exists)"
    return f"{where}: {reason}" if where else reason


def _database_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and ("locked" in text or "busy" in text)


def describe(exc: BaseException) -> tuple[str, int]:
    """The error line (without ``error: ``) and the exit status for a failure."""
    if isinstance(exc, click.UsageError):
        return one_line(_usage(exc)), USAGE
    if isinstance(exc, click.ClickException):
        return one_line(exc.format_message()), exc.exit_code or FAILURE
    if isinstance(exc, click.Abort | KeyboardInterrupt):
        return "interrupted", FAILURE
    if _database_busy(exc):
        return (
            f"the database is locked by another process for longer than the busy timeout ({exc}): "
            "wait for that process to finish (or stop it) and run the command again, or raise "
            "sqlite_busy_timeout_ms"
        ), FAILURE
    name = type(exc).__name__
    if name in {"SettingsError", "BuildError", "TilesBuildError", "BackupError", "MigrationError"}:
        return one_line(str(exc)), FAILURE
    if name in {"CustodyPassphraseError", "CustodyRefused"}:
        return f"custody key: {one_line(str(exc))}", FAILURE
    if name == "CustodyError":
        return (
            f"custody key: {one_line(str(exc))}: restore custody.key from a backup or fix "
            "APPLIANCE_CUSTODY_KEY (`appliance custody init` creates one only where there is none)"
        ), FAILURE
    if isinstance(exc, OSError):
        return one_line(_os_error(exc)), FAILURE
    return (
        f"unexpected {name}: {one_line(str(exc)) or 'no message'} "
        "(run again with --debug for the traceback, and report it)"
    ), FAILURE


def report(exc: BaseException, file: Any = None) -> int:
    """Print the failure (a traceback first only when debugging); return the exit status."""
    stream = file or sys.stderr
    message, status = describe(exc)
    if debug_enabled() and not isinstance(exc, click.UsageError | click.Abort | KeyboardInterrupt):
        traceback.print_exception(exc, file=stream)
    try:
        print(f"error: {message}", file=stream, flush=True)
    except (OSError, ValueError):  # standard error closed: the exit status still tells
        pass
    return status
