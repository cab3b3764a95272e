"""The `appliance` command: one click group; every module in this package adds its commands.

A module contributes by defining ``register(group)``; modules are found with pkgutil so the frozen
executable (which collects this package) has the same commands.
"""

from __future__ import annotations

import importlib
import pkgutil

import click

from appliance import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="appliance")
def cli() -> None:
    """The appliance: delivery dispatch service and payout engine in one executable."""


def _load_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(cli)


_load_commands()


def main() -> None:
    cli(prog_name="appliance")
