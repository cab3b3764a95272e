"""`appliance operator balance|credit|debit|set-ledger-mode|pause|resume|set-limits|
allow-destination|remove-destination|controls`: the deployment administrator's side of the
per-operator ledger and spending controls (docs/engine-treasury.md). Added to the `operator` group
by appliance/cli/operator.py; JSON output like the other operator commands."""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


def actor(by: str | None) -> str:
    """Who acts: --by, or the OS user running the command."""
    if by:
        return by
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container): still recorded
        return "unknown"


def with_ledger(settings: Settings, action: Callable[[], Any]) -> Any:
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database, connection
    from appliance.engine.db import database
    from appliance.engine.ledger.service import LedgerError

    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    try:
        with connection(database):
            return action()
    except LedgerError as exc:
        raise click.ClickException(str(exc)) from None


def _asset(settings: Settings, text: str) -> tuple[str, str]:
    from appliance.engine.ledger.service import LedgerError, resolve_asset

    try:
        return resolve_asset(settings, text)
    except LedgerError as exc:
        raise click.ClickException(str(exc)) from None


def _balance_text(result: dict[str, Any]) -> str:
    lines = [f"operator {result['operatorId']} (ledger mode {result['ledgerMode']})"]
    lines += [
        f"  {b['assetId']}: available {b['availableMinor']}, in flight {b['inFlightMinor']} "
        f"(deposited {b['depositedMinor']}, paid out {b['paidOutMinor']}, fees {b['networkFeesMinor']}, "
        f"adjustments {b['adjustmentsMinor']})"
        for b in result["balances"]
    ]
    return "\n".join(lines) if result["balances"] else lines[0] + "\n  no ledger entries"


def _adjust_command(name: str, sign: int, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("operator_id")
    @click.option("--asset", required=True, help="chainId:assetCode, or a code offered on one chain.")
    @click.option("--amount", required=True, help="Minor units (wei for ETH), a positive whole number.")
    @click.option("--memo", required=True, help="Why (kept with the entry).")
    @click.option("--by", default=None, help="Who (default: the OS user).")
    @command_options
    def command(
        operator_id: str,
        asset: str,
        amount: str,
        memo: str,
        by: str | None,
        settings: Settings,
        as_json: bool,
    ) -> None:
        from appliance.engine.ledger.service import adjust, parse_amount

        chain_id, code = _asset(settings, asset)
        result = with_ledger(
            settings,
            lambda: adjust(
                operator_id, chain_id, code, sign * parse_amount(amount), memo=memo, actor=actor(by)
            ),
        )
        emit(as_json, result, lambda: _balance_text(result))

    return command


def add_ledger_commands(group: click.Group) -> None:
    group.add_command(
        _adjust_command("credit", 1, "Credit an operator's ledger (an administrator's adjustment).")
    )
    group.add_command(
        _adjust_command("debit", -1, "Debit an operator's ledger (an administrator's adjustment).")
    )
    for command in (
        balance_command,
        mode_command,
        pause_command,
        resume_command,
        limits_command,
        allow_command,
        disallow_command,
        controls_command,
    ):
        group.add_command(command)


@click.command("balance")
@click.argument("operator_id")
@command_options
def balance_command(operator_id: str, settings: Settings, as_json: bool) -> None:
    """An operator's ledger: available, in flight, deposited, paid out, fees, adjustments per asset."""
    from appliance.engine.ledger.service import balance

    result = with_ledger(settings, lambda: balance(operator_id))
    emit(as_json, result, lambda: _balance_text(result))


@click.command("set-ledger-mode")
@click.argument("operator_id")
@click.argument("mode", type=click.Choice(["prefunded", "unlimited"]))
@command_options
def mode_command(operator_id: str, mode: str, settings: Settings, as_json: bool) -> None:
    """prefunded: payouts wait until the operator's available balance covers them; unlimited (the
    default): the ledger counts, nothing waits for it."""
    from appliance.engine.ledger.service import set_ledger_mode

    result = with_ledger(settings, lambda: set_ledger_mode(operator_id, mode))
    emit(as_json, result, lambda: f"operator {operator_id}: ledger mode {result['ledgerMode']}")


def _controls_text(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2)


@click.command("pause")
@click.argument("operator_id")
@click.option("--by", default=None, help="Who (default: the OS user).")
@command_options
def pause_command(operator_id: str, by: str | None, settings: Settings, as_json: bool) -> None:
    """Stop an operator: its submissions are answered 503 and nothing more of its is signed
    (payouts already signed hold their nonce and go out; `appliance payout cancel` stops one)."""
    from appliance.engine.ledger.service import set_paused

    result = with_ledger(settings, lambda: set_paused(operator_id, True, actor(by)))
    emit(as_json, result, lambda: f"operator {operator_id} paused")


@click.command("resume")
@click.argument("operator_id")
@click.option("--by", default=None, help="Who (default: the OS user).")
@command_options
def resume_command(operator_id: str, by: str | None, settings: Settings, as_json: bool) -> None:
    """Let a paused operator submit and its waiting payouts be signed again."""
    from appliance.engine.ledger.service import set_paused

    result = with_ledger(settings, lambda: set_paused(operator_id, False, actor(by)))
    emit(as_json, result, lambda: f"operator {operator_id} resumed")


@click.command("set-limits")
@click.argument("operator_id")
@click.option("--asset", required=True, help="chainId:assetCode, or a code offered on one chain.")
@click.option("--max-payout", default=None, help="Most one payout may be (minor units; 'none' removes it).")
@click.option("--daily-volume", default=None, help="Most reserved in any 24 h (minor units; 'none').")
@click.option("--approval-above", default=None, help="Payouts above this wait for approval ('none').")
@click.option(
    "--approval-rolling",
    default=None,
    help="Once the operator's payouts of the asset submitted within the window pass this, each "
    "further one waits for approval (minor units; 'none').",
)
@click.option(
    "--approval-window", default=None, help="The rolling approval threshold's window in hours (default 24)."
)
@click.option(
    "--exposure-ceiling",
    default=None,
    help="Most an unlimited operator may pay out beyond what it deposited or was credited; a payout "
    "taking it further is refused at submission (minor units; 'none').",
)
@command_options
def limits_command(
    operator_id: str,
    asset: str,
    max_payout: str | None,
    daily_volume: str | None,
    approval_above: str | None,
    approval_rolling: str | None,
    approval_window: str | None,
    exposure_ceiling: str | None,
    settings: Settings,
    as_json: bool,
) -> None:
    """Set an operator's limits for one asset (options not given are left as they are)."""
    from appliance.engine.ledger.service import set_limits

    chain_id, code = _asset(settings, asset)
    changes = {
        "max_payout_minor": max_payout,
        "daily_volume_minor": daily_volume,
        "approval_above_minor": approval_above,
        "approval_rolling_minor": approval_rolling,
        "approval_window_hours": approval_window,
        "exposure_ceiling_minor": exposure_ceiling,
    }
    result = with_ledger(settings, lambda: set_limits(operator_id, chain_id, code, changes))
    emit(as_json, result, lambda: _controls_text(result))


@click.command("allow-destination")
@click.argument("operator_id")
@click.argument("address")
@click.option("--chain-id", "chain_id", required=True)
@command_options
def allow_command(operator_id: str, address: str, chain_id: str, settings: Settings, as_json: bool) -> None:
    """Add a destination to the operator's allow-list on a chain: once it has one, its payouts on
    that chain may go only to listed addresses (others are answered 400)."""
    from appliance.engine.ledger.service import set_destination

    result = with_ledger(settings, lambda: set_destination(operator_id, chain_id, address, True))
    emit(as_json, result, lambda: _controls_text(result))


@click.command("remove-destination")
@click.argument("operator_id")
@click.argument("address")
@click.option("--chain-id", "chain_id", required=True)
@command_options
def disallow_command(
    operator_id: str, address: str, chain_id: str, settings: Settings, as_json: bool
) -> None:
    """Remove a destination from the allow-list (the last one removed: any destination again)."""
    from appliance.engine.ledger.service import set_destination

    result = with_ledger(settings, lambda: set_destination(operator_id, chain_id, address, False))
    emit(as_json, result, lambda: _controls_text(result))


@click.command("controls")
@click.argument("operator_id")
@command_options
def controls_command(operator_id: str, settings: Settings, as_json: bool) -> None:
    """An operator's ledger mode, pause, limits and destination allow-list."""
    from appliance.engine.ledger.service import controls

    result = with_ledger(settings, lambda: controls(operator_id))
    emit(as_json, result, lambda: _controls_text(result))
