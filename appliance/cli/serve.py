"""serve and demo."""

from __future__ import annotations

from typing import Any

import click

from appliance.cli._options import command_options
from appliance.cli.admin import migrate_all
from appliance.settings import Settings


def build_apps(
    settings: Settings, only: str | None
) -> tuple[list[tuple[str, Any, int]], list[tuple[str, Any]]]:
    """The WSGI apps to serve (name, app, port) and their background workers."""
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine

    apps: list[tuple[str, Any, int]] = []
    workers: list[tuple[str, Any]] = []
    if only in (None, "dispatch"):
        dispatch = create_dispatch(settings)
        apps.append(("dispatch", dispatch, settings.dispatch_port))
        workers.extend(dispatch.extensions["dispatch"].workers)
    if only in (None, "engine"):
        engine = create_engine(settings)
        apps.append(("engine", engine, settings.engine_port))
        workers.extend(engine.extensions["engine"].workers)
    return apps, workers


def check_ports_free(settings: Settings, only: str | None) -> None:
    """Stop at once, naming the port, when another program listens on one of ours (before the
    demo spends a minute preparing, and before migrations): binding again later may still fail
    on a race, and that failure is reported too (appliance/cli/_errors.py), without the port."""
    import errno
    import socket

    for name, port, flag in (
        ("dispatch", settings.dispatch_port, "--dispatch-port"),
        ("engine", settings.engine_port, "--engine-port"),
    ):
        if only not in (None, name) or port == 0:
            continue
        try:
            family, kind, proto, _, address = socket.getaddrinfo(
                settings.host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
            )[0]
        except OSError as exc:
            raise click.ClickException(f"host {settings.host!r} cannot be listened on: {exc}") from None
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                raise click.ClickException(
                    f"port {port} on {settings.host} ({name}) is already in use: stop the program "
                    f"listening there (another appliance?) or give another port ({flag} or the "
                    f"setting {name}_port)"
                ) from None


def check_custody_key(settings: Settings) -> Settings:
    """A custody key that is there but unusable (custody.key emptied or damaged, a wrong
    APPLIANCE_CUSTODY_KEY, no passphrase or a wrong one for an encrypted key) stops `serve` here,
    in the one process, with one line: found later by each forked serving process it would only be
    logged there and the process started again and again. No key at all is no failure: the engine
    serves, payouts wait (payout-engine spec). Returns the settings carrying a passphrase typed on
    the terminal, for the serving processes to open the key with."""
    from appliance.cli.custody import with_passphrase
    from appliance.engine.custody_file import load_for

    settings = with_passphrase(settings)
    load_for(settings)
    return settings


def serve_settings(settings: Settings, only: str | None) -> None:
    from appliance.server import serve, serve_processes, stop_signals_held

    check_ports_free(settings, only)
    migrate_all(settings)
    if only in (None, "engine"):
        settings = check_custody_key(settings)
    announce = lambda line: click.echo(line, nl=True)  # noqa: E731
    processes = settings.serving_process_count
    if processes == 1:
        with stop_signals_held():  # threads the apps start leave the stop signals to serve's wait
            apps, workers = build_apps(settings, only)
        serve(settings, apps, workers=workers, announce=announce)
        return
    # The apps' modules are imported once here, before the serving processes are forked, so that
    # their code is shared; each process builds its own apps (connections, engines) after the fork.
    import appliance.dispatch.app
    import appliance.engine.app  # noqa: F401
    from appliance.engine.chain.registry import import_chain_modules

    if only in (None, "engine"):
        import_chain_modules(settings)

    ports = [
        (name, port)
        for name, port in (("dispatch", settings.dispatch_port), ("engine", settings.engine_port))
        if only in (None, name)
    ]
    serve_processes(settings, ports, lambda: build_apps(settings, only), processes, announce=announce)


def _serve_options(fn):
    fn = click.option("--public-url", "public_url", default=None, help="Base URL in emailed links.")(fn)
    fn = click.option("--only", type=click.Choice(["dispatch", "engine"]), default=None)(fn)
    fn = click.option("--engine-port", "engine_port", type=int, default=None, help="Default 8081.")(fn)
    fn = click.option("--dispatch-port", "dispatch_port", type=int, default=None, help="Default 8080.")(fn)
    fn = click.option("--host", "host", default=None, help="Default 127.0.0.1.")(fn)
    fn = click.option(
        "--processes", "processes", type=int, default=None, help="Serving processes; default one per core."
    )(fn)
    return fn


@click.command("serve")
@_serve_options
@command_options
def serve_command(only: str | None, settings: Settings, as_json: bool) -> None:
    """Migrate, then serve the dispatch API and the engine API until SIGINT or SIGTERM."""
    serve_settings(settings, only)


@click.command("demo")
@_serve_options
@command_options
def demo_command(only: str | None, settings: Settings, as_json: bool) -> None:
    """A ready-to-try install on the embedded defaults, then serve."""
    from appliance.cli.custody import with_passphrase
    from appliance.demo import prepare_demo

    check_ports_free(settings, only)
    migrate_all(settings)
    settings = with_passphrase(settings)  # an encrypted custody.key: asked once, here
    for line in prepare_demo(settings):
        click.echo(line)
    serve_settings(settings, only)


def register(group: click.Group) -> None:
    group.add_command(serve_command)
    group.add_command(demo_command)
