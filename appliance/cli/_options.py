"""Options every command shares (--data-dir, --json), settings loading and output."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from appliance.cli._errors import set_debug
from appliance.settings import Settings, SettingsError, load_settings


def input_file() -> click.Path:
    """A file the command reads: it must exist and be readable (else a usage error, exit 2), and
    it is made absolute at once, so that nothing below depends on the current directory."""
    return click.Path(exists=True, dir_okay=False, readable=True, resolve_path=True, path_type=Path)


def output_path(*, dir_okay: bool = True, file_okay: bool = True) -> click.Path:
    """A path the command writes, made absolute at once."""
    return click.Path(dir_okay=dir_okay, file_okay=file_okay, resolve_path=True, path_type=Path)


def command_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add --data-dir and --json to a command; the command receives ``settings`` and ``as_json``."""

    @click.option(
        "--data-dir",
        "data_dir",
        type=click.Path(file_okay=False),
        default=None,
        help="Data directory (env APPLIANCE_DATA_DIR, default ./data).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
    @click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        callback=set_debug,
        help="On failure, print the traceback before the error line (also APPLIANCE_DEBUG=1).",
    )
    @functools.wraps(fn)
    def wrapper(*args: Any, data_dir: str | None, as_json: bool, **kwargs: Any) -> Any:
        overrides = {name: kwargs.pop(name) for name in list(kwargs) if name in _SETTING_FLAGS}
        settings = settings_from(data_dir=data_dir, **overrides)
        configure_logging(settings)
        return fn(*args, settings=settings, as_json=as_json, **kwargs)

    return wrapper


# Command flags that are settings (passed to load_settings rather than to the command).
_SETTING_FLAGS = {"host", "dispatch_port", "engine_port", "public_url", "processes"}


def settings_from(**overrides: Any) -> Settings:
    try:
        return load_settings(overrides)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


def configure_logging(settings: Settings) -> None:
    from appliance.common.logs import JsonFormatter, SafeFormatter

    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(SafeFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logging.basicConfig(level=settings.log_level.upper(), handlers=[handler])
    logging.getLogger().setLevel(settings.log_level.upper())


def emit(as_json: bool, data: Any, text: str | Callable[[], str]) -> None:
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, default=str))
    else:
        click.echo(text() if callable(text) else text)
