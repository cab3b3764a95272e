"""`appliance operator create|add-secret|remove-secret|list|add-signing-key|remove-signing-key`:
engine operators, their secrets and the Ed25519 keys they sign payout instructions with.
A secret is printed exactly once, when created. The ledger and spending-control commands of the
same group are in _ledger.py (a private module: not a command module of its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from appliance.cli._ledger import add_ledger_commands
from appliance.cli._options import command_options, emit
from appliance.settings import Settings


def _with_engine(settings: Settings, action: Callable[[bytes], Any]) -> Any:
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database, connection
    from appliance.common.keys import load_or_create_master_key
    from appliance.engine.auth.operators import OperatorError
    from appliance.engine.db import database

    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    master_key = load_or_create_master_key(settings.data_dir)
    try:
        with connection(database):
            return action(master_key)
    except OperatorError as exc:
        raise click.ClickException(str(exc)) from None


@click.group("operator")
def operator_group() -> None:
    """Payout-engine operators and their secrets."""


def _secret_text(result: dict[str, str]) -> str:
    return (
        f"operator {result['operatorId']}\nsecret id {result['secretId']}\n"
        f"secret {result['secret']}\n(the secret is shown only this once)"
    )


@operator_group.command("create")
@click.argument("operator_id")
@command_options
def create_command(operator_id: str, settings: Settings, as_json: bool) -> None:
    """Register an operator with one new secret."""
    from appliance.engine.auth.operators import create_operator

    result = _with_engine(settings, lambda key: create_operator(key, operator_id))
    emit(as_json, result, lambda: _secret_text(result))


@operator_group.command("add-secret")
@click.argument("operator_id")
@command_options
def add_secret_command(operator_id: str, settings: Settings, as_json: bool) -> None:
    """Add one more secret (rotation: add, move clients, remove the old one)."""
    from appliance.engine.auth.operators import add_secret

    result = _with_engine(settings, lambda key: add_secret(key, operator_id))
    emit(as_json, result, lambda: _secret_text(result))


@operator_group.command("remove-secret")
@click.argument("operator_id")
@click.argument("secret_id")
@command_options
def remove_secret_command(operator_id: str, secret_id: str, settings: Settings, as_json: bool) -> None:
    """Remove a secret; requests signed with it fail from then on."""
    from appliance.engine.auth.operators import remove_secret

    result = _with_engine(settings, lambda _key: remove_secret(operator_id, secret_id))
    emit(
        as_json, result, lambda: f"secrets left for {operator_id}: {', '.join(result['secretIds']) or 'none'}"
    )


@operator_group.command("list")
@command_options
def list_command(settings: Settings, as_json: bool) -> None:
    """Operators and their secret ids (never the secrets)."""
    from appliance.engine.auth.operators import list_operators

    operators = _with_engine(settings, lambda _key: list_operators())
    emit(
        as_json,
        {"operators": operators},
        lambda: (
            "\n".join(f"{o['operatorId']}: {', '.join(o['secretIds'])}" for o in operators) or "no operators"
        ),
    )


def _signing_key(operator_id: str, change: Callable[[], Any]) -> Any:
    from appliance.engine.payouts.instructions import SigningKeyError

    try:
        return change()
    except SigningKeyError as exc:
        raise click.ClickException(f"operator {operator_id}: {exc}") from None


@operator_group.command("add-signing-key")
@click.argument("operator_id")
@click.option(
    "--public-key",
    "public_key",
    required=True,
    help="The operator's Ed25519 public key, 64 hex digits (its private key stays with the operator).",
)
@command_options
def add_signing_key_command(operator_id: str, public_key: str, settings: Settings, as_json: bool) -> None:
    """Require the operator's signature on every payout instruction, with this key (replaces one)."""
    from appliance.engine.payouts.instructions import set_signing_key

    result = _with_engine(
        settings, lambda _key: _signing_key(operator_id, lambda: set_signing_key(operator_id, public_key))
    )
    # The signer's own copy (signer.db), which the serving side cannot write: it verifies there.
    # After the engine's: a failure here leaves the engine the stricter side (asking for signatures).
    from appliance.engine.signer import admin as signer_admin

    signer_admin.set_signing_key(settings, operator_id, result["publicKey"])
    emit(
        as_json,
        result,
        f"operator {operator_id}: payouts need an instruction signature by {result['publicKey']}",
    )


@operator_group.command("remove-signing-key")
@click.argument("operator_id")
@command_options
def remove_signing_key_command(operator_id: str, settings: Settings, as_json: bool) -> None:
    """Revoke the operator's signing key: its payouts need no instruction signature from then on."""
    from appliance.engine.payouts.instructions import remove_signing_key
    from appliance.engine.signer import admin as signer_admin

    # The signer's copy first: a failure there leaves the engine still asking for signatures (the
    # stricter side), never the engine accepting payouts the signer would then refuse to sign.
    signer_admin.remove_signing_key(settings, operator_id)
    result = _with_engine(
        settings, lambda _key: _signing_key(operator_id, lambda: remove_signing_key(operator_id))
    )
    emit(
        as_json,
        result,
        f"operator {operator_id}: "
        + ("signing key revoked" if result["revoked"] else "had no signing key in force"),
    )


@click.group("webhook")
def webhook_group() -> None:
    """Operators' webhook endpoints."""


@webhook_group.command("list")
@click.option("--operator", "operator_id", default=None, help="Only this operator's endpoints.")
@command_options
def webhook_list_command(operator_id: str | None, settings: Settings, as_json: bool) -> None:
    """Every webhook endpoint, disabled ones with their last error."""
    from appliance.engine.webhooks.service import endpoints

    result = {"endpoints": _with_engine(settings, lambda key: endpoints(operator_id))}
    emit(
        as_json,
        result,
        lambda: (
            "\n".join(
                f"{e['operatorId']} {e['endpointUrl']} {'active' if e['active'] else 'DISABLED'}"
                + (f" (last error: {e['lastError']})" if e["lastError"] else "")
                for e in result["endpoints"]
            )
            or "no webhook endpoints"
        ),
    )


add_ledger_commands(operator_group)


def register(group: click.Group) -> None:
    group.add_command(operator_group)
    group.add_command(webhook_group)
