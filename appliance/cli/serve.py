"""serve and demo."""

from __future__ import annotations

import click

from appliance.cli._options import command_options
from appliance.cli.admin import migrate_all
from appliance.settings import Settings


def serve_settings(settings: Settings, only: str | None) -> None:
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine
    from appliance.server import serve

    migrate_all(settings)
    apps = []
    workers = []
    if only in (None, "dispatch"):
        dispatch = create_dispatch(settings)
        apps.append(("dispatch", dispatch, settings.dispatch_port))
        workers.extend(dispatch.extensions["dispatch"].workers)
    if only in (None, "engine"):
        engine = create_engine(settings)
        apps.append(("engine", engine, settings.engine_port))
        workers.extend(engine.extensions["engine"].workers)
    serve(settings, apps, workers=workers, announce=lambda line: click.echo(line, nl=True))


def _serve_options(fn):
    fn = click.option("--public-url", "public_url", default=None, help="Base URL in emailed links.")(fn)
    fn = click.option("--only", type=click.Choice(["dispatch", "engine"]), default=None)(fn)
    fn = click.option("--engine-port", "engine_port", type=int, default=None, help="Default 8081.")(fn)
    fn = click.option("--dispatch-port", "dispatch_port", type=int, default=None, help="Default 8080.")(fn)
    fn = click.option("--host", "host", default=None, help="Default 127.0.0.1.")(fn)
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

    migrate_all(settings)
    for line in prepare_demo(settings):
        click.echo(line)
    serve_settings(settings, only)


def register(group: click.Group) -> None:
    group.add_command(serve_command)
    group.add_command(demo_command)
