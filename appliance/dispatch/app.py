"""The dispatch service's WSGI app: create_app(settings) binds the database, builds every engine
into one DispatchRuntime and registers every area's routes. Nothing here runs at import time."""

from __future__ import annotations

from datetime import timedelta

from flask import Blueprint, Flask

from appliance import __version__
from appliance.backups.history import backups_probe
from appliance.backups.schedule import backup_workers
from appliance.common import keys, metrics, ratelimit
from appliance.common.api import build_openapi
from appliance.common.db import bind_database, checkpoint_workers
from appliance.common.health import HealthRegistry, database_probe, disk_probe
from appliance.common.jobs import run_worker
from appliance.common.kept import KeptAnswers
from appliance.common.mail import Mailer
from appliance.common.objects import LocalObjectStore, ObjectStore
from appliance.common.openapi_routes import serve_openapi
from appliance.common.runtime import Worker
from appliance.common.s3store import S3ObjectStore
from appliance.common.webapp import create_base_app
from appliance.dispatch import metrics as dispatch_metrics
from appliance.dispatch import problems
from appliance.dispatch.auth import requested_mail
from appliance.dispatch.auth import routes as auth
from appliance.dispatch.cash import routes as cash
from appliance.dispatch.company import routes as company
from appliance.dispatch.courier_app import routes as courier_app
from appliance.dispatch.couriers import routes as couriers
from appliance.dispatch.db import MIGRATIONS, database
from appliance.dispatch.eta import routes as eta
from appliance.dispatch.events import routes as events
from appliance.dispatch.events.stream import StreamSlots
from appliance.dispatch.fees import routes as fees
from appliance.dispatch.fiscal import routes as fiscal
from appliance.dispatch.fiscal.sender import ReceiptSender
from appliance.dispatch.geo import routes as geo
from appliance.dispatch.geocoding import routes as geocoding
from appliance.dispatch.health import routes as health
from appliance.dispatch.health.probes import solver_probe, tiles_probe
from appliance.dispatch.housekeeping import Housekeeping
from appliance.dispatch.integrations import routes as integrations
from appliance.dispatch.integrations.sender import OrderWebhookSender
from appliance.dispatch.messages import routes as messages
from appliance.dispatch.messages.sender import RecipientSender
from appliance.dispatch.models import OutgoingMail
from appliance.dispatch.objects import routes as objects
from appliance.dispatch.orders import routes as orders
from appliance.dispatch.orders.listing import KEPT_ANSWERS
from appliance.dispatch.pages import routes as pages
from appliance.dispatch.plans import routes as plans
from appliance.dispatch.reports import routes as reports
from appliance.dispatch.routing.engines import Router
from appliance.dispatch.routing.memo import RouteMemo
from appliance.dispatch.routing.setup import make_router, routing_probe
from appliance.dispatch.runtime import DispatchRuntime
from appliance.dispatch.statements import routes as statements
from appliance.dispatch.team import routes as team
from appliance.dispatch.tiles import routes as tiles
from appliance.dispatch.tracking import routes as tracking
from appliance.dispatch.tracking.kept import KEPT_VIEWS
from appliance.settings import Settings

API_VERSION = "0.5.0"

# The areas of the service, in registration order (the order of the OpenAPI document's paths).
AREAS: tuple[Blueprint, ...] = (
    health.bp,
    auth.bp,
    company.bp,
    integrations.bp,
    team.bp,
    objects.bp,
    orders.bp,
    couriers.bp,
    courier_app.bp,
    cash.bp,
    geo.bp,
    geocoding.bp,
    reports.bp,
    fees.bp,
    statements.bp,
    plans.bp,
    eta.bp,
    tracking.bp,
    messages.bp,
    fiscal.bp,
    events.bp,
    tiles.bp,
    pages.bp,
)


def build_object_store(settings: Settings, master_key: bytes) -> ObjectStore:
    """An S3-compatible bucket when s3_endpoint is set (clients then upload to and download from
    the bucket itself), else the embedded store served at /objects."""
    if settings.s3_endpoint:
        return S3ObjectStore(
            settings.s3_endpoint,
            settings.s3_bucket,
            settings.s3_access_key,
            settings.s3_secret_key,
            settings.s3_region,
            lifetime_seconds=settings.presigned_url_seconds,
            max_bytes=settings.max_upload_bytes,
        )
    return LocalObjectStore(
        settings.data_dir / "objects",
        master_key,
        settings.dispatch_public_url,
        lifetime_seconds=settings.presigned_url_seconds,
        max_bytes=settings.max_upload_bytes,
    )


def build_mailer(settings: Settings, master_key: bytes) -> Mailer:
    return Mailer(
        OutgoingMail,
        database,
        smtp_url=settings.smtp_url,
        mail_from=settings.mail_from,
        ca_file=settings.smtp_ca_file,
        outbox=settings.data_dir / "outbox",
        master_key=master_key,
    )


def build_health(settings: Settings, router: Router, store: ObjectStore) -> HealthRegistry:
    health = HealthRegistry()
    health.register("routing", routing_probe(router, settings.data_dir))
    health.register("solver", solver_probe)
    health.register("database", database_probe(database, MIGRATIONS))
    health.register(
        "disk", disk_probe(settings.data_dir, settings.min_free_disk_mb, settings.disk_headroom_minutes)
    )
    health.register("tiles", tiles_probe(settings.data_dir, settings.tiles_url))
    if isinstance(store, S3ObjectStore):  # the embedded store is the data directory's, checked above
        health.register("objects", store.probe)
    if settings.backup_every_hours:  # scheduled backups and their drills (appliance/backups/)
        health.register("backups", backups_probe(timedelta(hours=settings.backup_every_hours)))
    return health


def build_workers(
    settings: Settings, mailer: Mailer, recipients: RecipientSender, master_key: bytes
) -> list[tuple[str, Worker]]:
    """The service's background work for `appliance serve`, each claimed from the database."""
    housekeeping = Housekeeping(settings)
    # Order webhooks: the payout engine's SSRF and CA settings (docs/integrations.md).
    webhooks = OrderWebhookSender(
        master_key, ca_file=settings.webhook_ca_file, allow_private=settings.webhook_allow_private
    )
    # Fiscal receipts through e-HDM (docs/fiscal-receipts.md): printed once each, from the outbox.
    receipts = ReceiptSender(master_key, allow_private=settings.ehdm_allow_private)
    return [
        (
            "housekeeping",
            lambda stop: run_worker("housekeeping", database, stop, housekeeping.run_pass, idle_seconds=60),
        ),
        ("mail", mailer.worker),
        ("recipient-messages", recipients.worker),
        ("fiscal-receipts", receipts.worker),
        (
            "order-webhooks",
            lambda stop: run_worker("order-webhooks", database, stop, webhooks.run_pass, idle_seconds=0.5),
        ),
        *checkpoint_workers(database, settings.sqlite_checkpoint_seconds),
        *backup_workers(settings),  # the whole appliance's scheduled backups (appliance/backups/)
    ]


def build_runtime(settings: Settings) -> DispatchRuntime:
    master_key = keys.load_or_create_master_key(settings.data_dir)
    router = make_router(settings)
    store = build_object_store(settings, master_key)
    mailer = build_mailer(settings, master_key)
    routes = RouteMemo(router)
    recipients = RecipientSender(settings, master_key, mailer, routes)
    runtime = DispatchRuntime(
        settings=settings,
        master_key=master_key,
        health=build_health(settings, router, store),
        workers=build_workers(settings, mailer, recipients, master_key),
        router=router,
        routes=routes,
        recipients=recipients,
        objects=store,
        mailer=mailer,
        event_slots=StreamSlots(settings.event_stream_max),
        listings=KeptAnswers(KEPT_ANSWERS),
        tracking_views=KeptAnswers(KEPT_VIEWS),
    )
    # The mail asked for by address alone (a sign-in or password link), composed by the worker.
    mailer.composers.update(requested_mail.composers(runtime))
    return runtime


def create_app(settings: Settings) -> Flask:
    bind_database(
        database,
        settings.dispatch_db_url,
        busy_timeout_ms=settings.sqlite_busy_timeout_ms,
        background_checkpoints=settings.sqlite_checkpoint_seconds > 0,
    )
    app = create_base_app("appliance.dispatch", render_problem=problems.render, database=database)
    build_runtime(settings).install(app)
    metrics.install(app, settings, dispatch_metrics.collector())
    for blueprint in AREAS:
        app.register_blueprint(blueprint)
    ratelimit.install(
        app,
        enabled=settings.rate_limits_enabled,
        limit=settings.rate_limit_public,
        storage_uri=settings.rate_limit_storage,
        render_problem=problems.render,
    )

    serve_openapi(
        app,
        lambda: orders.document_uploads(
            build_openapi(
                app,
                title="Delivery Dispatch Service",
                version=API_VERSION,
                description=f"Multi-company delivery dispatch (appliance {__version__}).",
                problem_schema=problems.PROBLEM_SCHEMA,
                security_schemes={
                    "bearerAuth": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "a signed-in member's access token (a JWT) or, on the routes "
                        "whose access names them, a company's integration key (ik_…)",
                    }
                },
            )
        ),
    )
    return app
