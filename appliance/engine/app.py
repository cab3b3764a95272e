"""The payout engine's WSGI app: create_app(settings) binds engine.db and every area's routes."""

from __future__ import annotations

from flask import Flask

from appliance import __version__
from appliance.common import keys
from appliance.common.api import build_openapi
from appliance.common.db import bind_database
from appliance.common.health import HealthRegistry, database_probe
from appliance.common.openapi_routes import serve_openapi
from appliance.common.webapp import create_base_app
from appliance.engine import problems
from appliance.engine.db import MIGRATIONS, database
from appliance.engine.runtime import Runtime
from appliance.settings import Settings


def build_health(settings: Settings) -> HealthRegistry:
    health = HealthRegistry()
    health.register("database", database_probe(database, MIGRATIONS))
    return health


def create_app(settings: Settings) -> Flask:
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    app = create_base_app("appliance.engine", render_problem=problems.render, database=database)
    app.extensions["engine"] = Runtime(
        settings=settings,
        master_key=keys.load_or_create_master_key(settings.data_dir),
        health=build_health(settings),
    )

    from appliance.engine.health.routes import bp as health_bp
    from appliance.engine.payouts.routes import bp as payouts_bp
    from appliance.engine.treasury.routes import bp as treasury_bp

    for blueprint in (health_bp, payouts_bp, treasury_bp):
        app.register_blueprint(blueprint)

    serve_openapi(
        app,
        lambda: build_openapi(
            app,
            title="Payout Engine",
            version=__version__,
            description="Signed-request payout engine. Every /v1 endpoint needs the signature headers.",
            problem_schema=problems.PROBLEM_SCHEMA,
            security_schemes={
                "operatorSignature": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Signature",
                    "description": "HMAC-SHA256 of the five-line canonical string, with X-Operator-Id and "
                    "X-Timestamp (see docs/engine-auth.md).",
                }
            },
        ),
    )
    return app
