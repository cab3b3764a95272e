"""`appliance signer-policy show|set|allow|disallow|pause|resume|approve|journal-verify`: the
signer's own policy in signer.db (docs/engine-treasury.md, "The signer's own state"), changed
through the running signer with the administrator token, or in signer.db when no signer runs."""

from __future__ import annotations

import json
from typing import Any

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


def _run(settings: Settings, command: str, **args: Any) -> dict[str, Any]:
    from appliance.engine.signer.admin import AdminError, run
    from appliance.engine.signer.client import SignerUnavailable

    try:
        return run(settings, command, **args)
    except (AdminError, SignerUnavailable) as exc:
        raise click.ClickException(str(exc)) from None


def _changed(result: dict[str, Any]) -> str:
    if result["section"] == "allow":
        what = f"{result['name']} on the allow-list of {result['subject']}"
    else:
        what = f"{result['name']} of {result['subject'] or 'the deployment'}"
    value = "removed" if result["value"] is None else f"= {result['value']}"
    if result["delayed"]:
        return f"{what} {value}: a loosening, in force from {result['effectiveAt']}"
    return f"{what} {value}: in force now"


@click.group("signer-policy")
def signer_policy_group() -> None:
    """The signer's own limits, allow-lists, fee ceilings and journal (signer.db)."""


@signer_policy_group.command("show")
@command_options
def show_command(settings: Settings, as_json: bool) -> None:
    """The policy in force (with defaults), pending loosenings, approvals and the journal's head."""
    result = _run(settings, "show")
    emit(as_json, result, lambda: json.dumps(result, indent=2))


@signer_policy_group.command("set")
@click.argument("name")
@click.argument("value")
@click.option("--operator", default=None, help="A limit's operator (* for every operator without its own).")
@click.option("--chain-id", "chain_id", default=None, help="A limit's chain.")
@click.option("--asset", default=None, help="A limit's asset code.")
@click.option(
    "--network-id", "network_id", default=None, help="A fee or gas ceiling's network id (default *)."
)
@command_options
def set_command(
    name: str,
    value: str,
    operator: str | None,
    chain_id: str | None,
    asset: str | None,
    network_id: str | None,
    settings: Settings,
    as_json: bool,
) -> None:
    """Set NAME to VALUE (a whole number, true or false; `none` goes back to the default). A
    tightening applies at once, a loosening after change_delay_seconds."""
    args: dict[str, Any] = {"name": name, "value": None if value == "none" else value}
    for key, given in (("operator", operator), ("chainId", chain_id), ("asset", asset)):
        if given is not None:
            args[key] = given
    if network_id is not None:
        args["networkId"] = int(network_id) if network_id.isdigit() else network_id
    result = _run(settings, "set", **args)
    emit(as_json, result, lambda: _changed(result))


def _operator_command(command: str, doc: str) -> None:
    @signer_policy_group.command(command, help=doc)
    @click.option("--operator", required=True)
    @command_options
    def action(operator: str, settings: Settings, as_json: bool) -> None:
        result = _run(settings, command, operator=operator)
        emit(as_json, result, lambda: _changed(result))


_operator_command("pause", "Pause an operator in the signer: none of its payouts is signed (at once).")
_operator_command("resume", "Resume an operator in the signer (a loosening: after the delay).")


def _address_command(command: str, doc: str) -> None:
    @signer_policy_group.command(command, help=doc)
    @click.argument("address")
    @click.option("--operator", required=True)
    @command_options
    def action(address: str, operator: str, settings: Settings, as_json: bool) -> None:
        result = _run(settings, command, operator=operator, address=address)
        emit(as_json, result, lambda: _changed(result))


_address_command("allow", "Add ADDRESS to the operator's allow-list in the signer (empty list: any).")
_address_command("disallow", "Remove ADDRESS from the operator's allow-list in the signer.")


@signer_policy_group.command("approve")
@click.argument("payout_id")
@click.option("--operator", required=True)
@click.option("--by", default=None, help="Who approves (default: the OS user).")
@command_options
def approve_command(payout_id: str, operator: str, by: str | None, settings: Settings, as_json: bool) -> None:
    """Record in the signer an approval of a payout above the signer's approval threshold
    (`appliance payout approve` records the engine's approval and this one together)."""
    import getpass

    result = _run(settings, "approve", operator=operator, payoutId=payout_id, by=by or getpass.getuser())
    emit(
        as_json,
        result,
        lambda: f"payout {payout_id} of {operator} approved in the signer by {result['approvedBy']}",
    )


@signer_policy_group.command("journal-verify")
@command_options
def journal_verify_command(settings: Settings, as_json: bool) -> None:
    """Walk the signer journal's hash chain; exit 1 when an entry was edited or removed."""
    result = _run(settings, "journal-verify")
    emit(
        as_json,
        result,
        lambda: (
            f"journal intact: {result['entries']} entries, head {result['head']}"
            if result["ok"]
            else f"journal BROKEN after {result['entries']} entries: {result['problem']}"
        ),
    )
    if not result["ok"]:
        raise SystemExit(1)


def register(group: click.Group) -> None:
    group.add_command(signer_policy_group)
