"""`appliance admin set-password`: the engine administrator's console sign-in (a password and a
TOTP authenticator; docs/engine-admin.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings

PASSWORD_ENV = "APPLIANCE_ADMIN_PASSWORD"


@click.group("admin")
def admin_group() -> None:
    """The engine administrator's console (/admin/ on the engine's port)."""


@admin_group.command("set-password")
@click.option(
    "--password-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"Read the password from this file (else {PASSWORD_ENV}, else a prompt).",
)
@click.option("--keep-totp", is_flag=True, help="Keep the authenticator already enrolled.")
@command_options
def set_password_command(
    password_file: Path | None, keep_totp: bool, settings: Settings, as_json: bool
) -> None:
    """Set the administrator's password (at least 12 characters) and enrol a new TOTP
    authenticator (its secret is printed once); every console session ends."""
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database, connection
    from appliance.common.keys import load_or_create_master_key
    from appliance.engine.admin.accounts import set_password
    from appliance.engine.db import database

    if password_file is not None:
        password = password_file.read_text().rstrip("\r\n")
    elif os.environ.get(PASSWORD_ENV):
        password = os.environ[PASSWORD_ENV]
    elif sys.stdin.isatty():
        password = str(click.prompt("Administrator password", hide_input=True, confirmation_prompt=True))
    else:
        raise click.UsageError(f"give --password-file FILE or {PASSWORD_ENV}, or run on a terminal")
    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    master_key = load_or_create_master_key(settings.data_dir)
    try:
        with connection(database):
            enrolment = set_password(master_key, password, keep_totp=keep_totp)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    result = (
        {"totpSecret": enrolment.secret, "otpauthUri": enrolment.uri} if enrolment else {"totpSecret": None}
    )
    emit(
        as_json,
        result,
        lambda: (
            "password set; authenticator kept"
            if enrolment is None
            else "password set. Add this to your authenticator app (shown once):\n"
            f"  secret {enrolment.secret}\n  {enrolment.uri}"
        ),
    )


def register(group: click.Group) -> None:
    group.add_command(admin_group)
