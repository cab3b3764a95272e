"""serve, demo and signer."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from appliance.cli._options import command_options
from appliance.cli.admin import migrate_all
from appliance.settings import Settings

if TYPE_CHECKING:
    from appliance.engine.signer.keeper import SignerKeeper


def build_apps(
    settings: Settings, only: str | None, signer: Path | None = None
) -> tuple[list[tuple[str, Any, int]], list[tuple[str, Any]]]:
    """The WSGI apps to serve (name, app, port) and their background workers. The engine's custody
    is a client of the signer process listening at ``signer`` (None: there is no key)."""
    # Each service's modules only when it is served: the engine's (web3, eth-account, py-evm, the
    # custody code) take over half a second of CPU to import, which `--only dispatch` does not pay.
    apps: list[tuple[str, Any, int]] = []
    workers: list[tuple[str, Any]] = []
    if only in (None, "dispatch"):
        from appliance.dispatch.app import create_app as create_dispatch

        dispatch = create_dispatch(settings)
        apps.append(("dispatch", dispatch, settings.dispatch_port))
        workers.extend(dispatch.extensions["dispatch"].workers)
    if only in (None, "engine"):
        from appliance.engine.app import create_app as create_engine
        from appliance.engine.signer.client import SignerClient

        engine = create_engine(
            settings, custody_source=lambda: SignerClient(signer) if signer is not None else None
        )
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


def start_signer(settings: Settings) -> SignerKeeper | None:
    """The signer, started before anything else (docs/engine-treasury.md, The signer) by its keeper
    (appliance/engine/signer/keeper.py): they alone open the custody key or hold its passphrase
    (asked on the terminal by the keeper when neither APPLIANCE_CUSTODY_PASSPHRASE nor
    custody_passphrase_file gives it); this process and the serving processes forked from it never
    do. A key that is there but unusable (custody.key emptied or damaged, a wrong
    APPLIANCE_CUSTODY_KEY, no passphrase or a wrong one for an encrypted key) stops `serve` here
    with one line. No key at all is no failure and starts no signer: the engine serves, payouts
    wait (payout-engine spec)."""
    from appliance.cli.custody import with_passphrase
    from appliance.engine.signer.keeper import SignerKeeper
    from appliance.engine.signer.supervisor import has_custody_key

    if not has_custody_key(settings):
        return None
    return SignerKeeper.start(settings, with_passphrase)


def external_signer(settings: Settings) -> Path:
    """The socket of the signer `appliance signer` runs apart (the setting signer_socket): `serve`
    starts none of its own, and refuses the custody key and secrets that would only serve one."""
    from appliance.engine.custody import custody_path

    key = custody_path(settings.data_dir)
    given = [
        name
        for name, value in (
            (str(key), key.is_file()),
            ("APPLIANCE_CUSTODY_KEY", settings.custody_key),
            ("APPLIANCE_CUSTODY_PASSPHRASE", settings.custody_passphrase),
            ("custody_passphrase_file", settings.custody_passphrase_file),
        )
        if value
    ]
    if given:
        raise click.ClickException(
            f"signer_socket names an external signer ({settings.signer_socket}): serve starts no "
            f"signer of its own, so {' and '.join(given)} must be given to `appliance signer` only"
        )
    return Path(settings.signer_socket)


def serve_settings(settings: Settings, only: str | None, command: str = "serve") -> None:
    """Serve; ``command`` is the one this process runs as a program (it executes itself again as
    that command to clear custody secrets from its environment: keeper.exec_without_secrets)."""
    from appliance.engine.signer.keeper import adopted, exec_without_secrets, secrets_in_environment

    check_ports_free(settings, only)
    migrate_all(settings)
    if only in (None, "dispatch"):
        from appliance.dispatch.geocoding.upgrade import upgrade_stale_index

        # An address index of an older format: rebuilt here, once, before serving (logged).
        upgrade_stale_index(settings.data_dir)
    keeper = adopted(settings)
    signer: Path | None = None
    if keeper is None and only in (None, "engine"):
        if settings.signer_socket:
            signer = external_signer(settings)
        else:
            keeper = start_signer(settings)
    if secrets_in_environment():
        exec_without_secrets(keeper, command)  # never returns
    if keeper is not None:
        signer = keeper.path
    try:
        _serve(settings, only, signer)
    finally:
        if keeper is not None:
            keeper.stop()  # last: serving processes finishing requests may still sign


def _serve(settings: Settings, only: str | None, signer: Path | None) -> None:
    from appliance.serving import serve, serve_processes, stop_signals_held

    announce = lambda line: click.echo(line, nl=True)  # noqa: E731
    processes = settings.serving_process_count
    if processes == 1:
        with stop_signals_held():  # threads the apps start leave the stop signals to serve's wait
            apps, workers = build_apps(settings, only, signer)
        serve(settings, apps, workers=workers, announce=announce)
        return
    # The apps' modules are imported once here, before the serving processes are forked, so that
    # their code is shared; each process builds its own apps (connections, engines) after the fork.
    if only in (None, "dispatch"):
        import appliance.dispatch.app
    if only in (None, "engine"):
        import appliance.engine.app  # noqa: F401
        from appliance.engine.chain.registry import import_chain_modules

        import_chain_modules(settings)

    ports = [
        (name, port)
        for name, port in (("dispatch", settings.dispatch_port), ("engine", settings.engine_port))
        if only in (None, name)
    ]
    serve_processes(settings, ports, lambda: build_apps(settings, only, signer), processes, announce=announce)


def _serve_options(fn):
    fn = click.option("--public-url", "public_url", default=None, help="Base URL in emailed links.")(fn)
    fn = click.option("--only", type=click.Choice(["dispatch", "engine"]), default=None)(fn)
    fn = click.option("--engine-port", "engine_port", type=int, default=None, help="Default 8081.")(fn)
    fn = click.option("--dispatch-port", "dispatch_port", type=int, default=None, help="Default 8080.")(fn)
    fn = click.option("--host", "host", default=None, help="Default 127.0.0.1.")(fn)
    fn = click.option(
        "--processes",
        "processes",
        type=int,
        default=None,
        help="Serving processes; default one per core and one more.",
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
    from appliance.demo import prepare_demo
    from appliance.engine.signer.keeper import KEEPER_VARIABLE

    # Executed again without the custody secrets (serve_settings): prepared before, not again.
    if KEEPER_VARIABLE not in os.environ:
        check_ports_free(settings, only)
        migrate_all(settings)
        # An encrypted custody.key with no passphrase given: asked by the short-lived process that
        # reads the key's addresses, and again by the signer's keeper (neither is this process).
        for line in prepare_demo(settings):
            click.echo(line)
    serve_settings(settings, only, "demo")


def socket_group(name: str) -> int | None:
    """The group id of the setting signer_socket_group (a name or a number; empty: None)."""
    import grp

    if not name:
        return None
    try:
        return int(name) if name.isdigit() else grp.getgrnam(name).gr_gid
    except KeyError:
        raise click.ClickException(f"setting signer_socket_group: there is no group {name!r}") from None


@click.command("signer")
@command_options
def signer_command(settings: Settings, as_json: bool) -> None:
    """The signer on its own, as its own OS user (docs/security.md, Deployments), until SIGTERM."""
    import signal
    import sys

    from appliance.cli.custody import with_passphrase
    from appliance.common.filemodes import private_umask
    from appliance.engine.signer import process

    group = socket_group(settings.signer_socket_group)
    path = Path(settings.signer_socket) if settings.signer_socket else process.socket_path(settings.data_dir)
    private_umask()
    process.make_undumpable()  # before the passphrase is asked or read
    settings = with_passphrase(settings)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the socket is removed on the way out
    try:
        process.run(settings, path, None, None, group)
    except KeyboardInterrupt:
        pass
    finally:
        path.unlink(missing_ok=True)


def register(group: click.Group) -> None:
    group.add_command(serve_command)
    group.add_command(demo_command)
    group.add_command(signer_command)
