"""The `appliance` command: one click group; every module in this package adds its commands.

A module contributes by defining ``register(group)``; modules are found with pkgutil so the frozen
executable (which collects this package) has the same commands.

Modules are imported only when one of their commands runs: ``appliance --version`` imports none,
and ``appliance --help`` lists the commands from ``COMMANDS`` (name, module, one-line help) without
importing them. A module missing from ``COMMANDS`` still works: it is imported when the list or a
name not in the table is asked for (tests/common/test_cli_lazy_commands.py keeps the table true).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

import click

from appliance import __version__
from appliance.cli import _errors


class Entry(NamedTuple):
    module: str
    short_help: str


COMMANDS: dict[str, Entry] = {
    "admin": Entry("engine_admin", "The engine administrator's console (/admin/ on the engine's port)."),
    "audit": Entry("audit", "The audit logs of administrative acts (hash-chained)."),
    "backup": Entry(
        "backup",
        "Copy the data directory (databases, chain, objects, keys), encrypted, while the appliance serves.",
    ),
    "chain": Entry("custody", "The engine's chains."),
    "company": Entry("company", "Dispatch companies."),
    "custody": Entry("custody", "The engine's custody master key (custody.key in the data directory)."),
    "dispatch": Entry("dispatch", "Dispatch reports: exports of orders, cash and courier work."),
    "demo": Entry("serve", "A ready-to-try install on the embedded defaults, then serve."),
    "export": Entry("export", "CSV exports of the engine's reports."),
    "health": Entry("admin", "Run every readiness check of both services; exit 1 when any fails."),
    "init": Entry("admin", "Create the data directory and both databases, applying every migration."),
    "map": Entry("map", "Map tiles."),
    "migrate": Entry("admin", "Apply pending migrations."),
    "operator": Entry("operator", "Payout-engine operators and their secrets."),
    "orders": Entry("orders", "Dispatch orders."),
    "payout": Entry("payout", "One payout's attempts, cancelling a stuck payout, fenced wallets."),
    "reconcile": Entry(
        "treasury",
        "Reconcile custody wallets with the chains; print findings.",
    ),
    "reports": Entry("reports", "The engine's report projection."),
    "restore": Entry(
        "backup", "Restore a backup into an empty data directory (--data-dir), checking every checksum."
    ),
    "routing": Entry("routing", "Road routing data."),
    "serve": Entry(
        "serve", "Migrate, then serve the dispatch API and the engine API until SIGINT or SIGTERM."
    ),
    "signer-policy": Entry(
        "signer_policy", "The signer's own limits, allow-lists, fee ceilings and journal (signer.db)."
    ),
    "signer": Entry(
        "serve", "The signer on its own, as its own OS user (docs/security.md, Deployments), until SIGTERM."
    ),
    "sweeps": Entry("treasury", "Recent sweeps of deposit addresses into the payout wallet."),
    "treasury": Entry("treasury", "Custody wallets' balances per asset, on chain and expected."),
    "webhook": Entry("operator", "Operators' webhook endpoints."),
}


class LazyGroup(click.Group):
    """A group whose command modules are imported on first use of one of their commands."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._loaded: set[str] = set()

    def load_module(self, module: str) -> None:
        if module in self._loaded:
            return
        self._loaded.add(module)
        register = getattr(importlib.import_module(f"{__name__}.{module}"), "register", None)
        if register is not None:
            register(self)

    def load_unlisted_modules(self) -> None:
        """Modules no entry of COMMANDS names: their commands are only known once imported."""
        listed = {entry.module for entry in COMMANDS.values()}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            if not info.name.startswith("_") and info.name not in listed:
                self.load_module(info.name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.load_unlisted_modules()
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is not None:
            self.load_module(entry.module)
        elif cmd_name not in self.commands:
            self.load_unlisted_modules()
        return self.commands.get(cmd_name)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Every failure of every command as one line (appliance/cli/_errors.py); click's own
        handling (a usage block, "Error: …", a traceback) only when a caller asks for
        standalone_mode=False and handles failures itself."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        _errors.reset_debug()
        try:
            status = super().main(args, prog_name, complete_var, False, **extra)
        except SystemExit:
            raise
        except BaseException as exc:  # every failure gets its one line
            sys.exit(_errors.report(exc))
        # --help and --version end with their status; a command that returns ends with 0.
        sys.exit(status if isinstance(status, int) else 0)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            if name in COMMANDS and name not in self.commands:
                # Shortened exactly as click shortens a loaded command's help.
                short = click.Command(name, help=COMMANDS[name].short_help).get_short_help_str(limit)
                rows.append((name, short))
            else:
                command = self.commands[name]
                if not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, prog_name="appliance")
@click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_errors.set_debug,
    help="On failure, print the traceback before the error line (also APPLIANCE_DEBUG=1).",
)
def cli() -> None:
    """The appliance: delivery dispatch service and payout engine in one executable."""


def load_all_commands() -> None:
    """Import every command module (what the group did at import before it became lazy)."""
    group = cli
    assert isinstance(group, LazyGroup)
    for entry in COMMANDS.values():
        group.load_module(entry.module)
    group.load_unlisted_modules()


def main() -> None:
    # Every file and folder any command creates in the data directory is owner-only (issue 33).
    os.umask(0o077)
    cli(prog_name="appliance")
