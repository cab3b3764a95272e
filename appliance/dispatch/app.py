"""The dispatch service's WSGI app: create_app(settings) binds the database, the engines and every
area's routes. Nothing here runs at import time."""

from __future__ import annotations

import importlib

from flask import Flask

from appliance import __version__
from appliance.common import keys, ratelimit
from appliance.common.api import build_openapi
from appliance.common.db import bind_database
from appliance.common.health import HealthRegistry, database_probe
from appliance.common.jobs import run_worker
from appliance.common.openapi_routes import serve_openapi
from appliance.common.webapp import create_base_app
from appliance.dispatch import problems
from appliance.dispatch.db import MIGRATIONS, database
from appliance.dispatch.health.probes import solver_probe, tiles_probe
from appliance.dispatch.housekeeping import Housekeeping
from appliance.dispatch.routing.engines import Router
from appliance.dispatch.routing.setup import make_router, routing_probe
from appliance.dispatch.runtime import Runtime
from appliance.settings import Settings

API_VERSION = "0.5.0"


def build_health(settings: Settings, router: Router) -> HealthRegistry:
    health = HealthRegistry()
    health.register("routing", routing_probe(router))
    health.register("solver", solver_probe)
    health.register("database", database_probe(database, MIGRATIONS))
    health.register("tiles", tiles_probe(settings.data_dir, settings.tiles_url))
    return health


# Areas of the service, in registration order. Each is a package appliance/dispatch/<area>/ whose
# routes.py defines a Blueprint `bp` and may define `init_app(app)` to attach its engines (and
# health probes) to the runtime.
AREAS = (
    "health",
    "auth",
    "company",
    "team",
    "objects",
    "orders",
    "couriers",
    "courier_app",
    "cash",
    "geo",
    "plans",
    "eta",
    "tracking",
    "events",
    "tiles",
    "pages",
)


def register_areas(app: Flask) -> None:
    for area in AREAS:
        name = f"appliance.dispatch.{area}.routes"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name in {name, f"appliance.dispatch.{area}"}:
                continue  # an area not built yet
            raise
        init_app = getattr(module, "init_app", None)
        if init_app is not None:
            init_app(app)
        app.register_blueprint(module.bp)


def create_app(settings: Settings) -> Flask:
    bind_database(database, settings.dispatch_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    app = create_base_app("appliance.dispatch", render_problem=problems.render, database=database)
    router = make_router(settings)
    runtime = Runtime(
        settings=settings,
        master_key=keys.load_or_create_master_key(settings.data_dir),
        health=build_health(settings, router),
        engines={"router": router},
    )
    app.extensions["dispatch"] = runtime
    housekeeping = Housekeeping(settings)
    runtime.workers.append(
        (
            "housekeeping",
            lambda stop: run_worker("housekeeping", database, stop, housekeeping.run_pass, idle_seconds=60),
        )
    )

    register_areas(app)
    ratelimit.install(
        app,
        enabled=settings.rate_limits_enabled,
        limit=settings.rate_limit_public,
        storage_uri=settings.rate_limit_storage,
        render_problem=problems.render,
    )

    serve_openapi(
        app,
        lambda: build_openapi(
            app,
            title="Delivery Dispatch Service",
            version=API_VERSION,
            description=f"Multi-company delivery dispatch (appliance {__version__}).",
            problem_schema=problems.PROBLEM_SCHEMA,
            security_schemes={"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
        ),
    )
    return app
