"""The payout engine's WSGI app: create_app(settings) binds engine.db, builds the chains,
custody and workers into one EngineRuntime and registers every area's routes (AREAS). Nothing
here runs at import time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Blueprint, Flask

from appliance import __version__
from appliance.common import keys, metrics
from appliance.common.api import build_openapi
from appliance.common.db import bind_database, checkpoint_workers
from appliance.common.health import HealthRegistry, database_probe, disk_probe
from appliance.common.jobs import run_worker
from appliance.common.openapi_routes import serve_openapi
from appliance.common.runtime import Worker
from appliance.common.webapp import create_base_app
from appliance.engine import metrics as engine_metrics
from appliance.engine import problems
from appliance.engine.admin import routes as admin_routes
from appliance.engine.assets import routes as assets
from appliance.engine.auth.operators import secrets_probe
from appliance.engine.chain.health import chain_probe
from appliance.engine.chain.registry import LOCAL_CHAIN_ID, Chains, build_chains
from appliance.engine.chain.waits import engine_waits
from appliance.engine.custody import CustodyKeys
from appliance.engine.custody_file import load_for
from appliance.engine.custody_record import custody_probe, guard
from appliance.engine.db import MIGRATIONS, database
from appliance.engine.deposits import routes as deposits
from appliance.engine.deposits.watcher import DepositWatcher
from appliance.engine.exports import routes as exports
from appliance.engine.exports.service import ExportWorker
from appliance.engine.health import routes as health
from appliance.engine.openapi import describe_offer
from appliance.engine.outgoing.fencing import fencing_probe
from appliance.engine.payouts import routes as payouts
from appliance.engine.payouts.pipeline import Pipeline, fee_ceilings
from appliance.engine.reports.projector import ReportProjector
from appliance.engine.runtime import EngineRuntime
from appliance.engine.signer.core import LocalSigner
from appliance.engine.sweeps.job import Sweeper
from appliance.engine.treasury import routes as treasury
from appliance.engine.treasury.job import ReconcileJob, treasury_probe
from appliance.engine.wallets import routes as wallets
from appliance.engine.webhooks import routes as webhooks
from appliance.engine.webhooks.sender import WebhookSender
from appliance.settings import Settings

# The areas of the engine, in registration order (the order of the OpenAPI document's paths).
AREAS: tuple[Blueprint, ...] = (
    health.bp,
    payouts.bp,
    assets.bp,
    wallets.bp,
    deposits.bp,
    webhooks.bp,
    exports.bp,
    treasury.bp,
    admin_routes.bp,
)


def build_health(
    settings: Settings, chains: Chains, master_key: bytes, custody: CustodyKeys | None = None
) -> HealthRegistry:
    registry = HealthRegistry()
    registry.register("database", database_probe(database, MIGRATIONS))
    registry.register(
        "disk", disk_probe(settings.data_dir, settings.min_free_disk_mb, settings.disk_headroom_minutes)
    )
    registry.register("keys", secrets_probe(master_key))
    registry.register("custody", custody_probe(custody))
    for chain_id, chain in chains.chains.items():
        registry.register(f"chain:{chain_id}", chain_probe(chain))
    registry.register("payouts:fencing", fencing_probe)
    registry.register("treasury", treasury_probe)
    return registry


def build_workers(
    settings: Settings, chains: Chains, custody: CustodyKeys | None, master_key: bytes
) -> list[tuple[str, Worker]]:
    """The engine's background work for `appliance serve`: the payout pipeline (leased rows, so
    several processes may run it), the deposit watcher (a lease per chain) and the embedded
    chain's miner (a single-holder lease), the treasury's reconcile job (a single-holder lease,
    every reconcile_interval_seconds) and the sweeps of deposit addresses (a single-holder lease,
    every sweep_interval_seconds)."""
    pipeline = Pipeline(
        chains,
        custody,
        poll=timedelta(seconds=min(1.0, settings.local_block_seconds)),
        data_dir=settings.data_dir,
        fee_ceilings=fee_ceilings(settings),
    )
    workers: list[tuple[str, Worker]] = [
        (
            "payouts",
            lambda stop: run_worker(
                "payouts", database, stop, pipeline.run_pass, idle_seconds=settings.payout_worker_seconds
            ),
        )
    ]
    watcher = DepositWatcher(chains)
    watch_idle = min(1.0, settings.local_block_seconds)
    workers.append(
        (
            "deposits",
            lambda stop: run_worker("deposits", database, stop, watcher.run_pass, idle_seconds=watch_idle),
        )
    )
    sender = WebhookSender(
        master_key, ca_file=settings.webhook_ca_file, allow_private=settings.webhook_allow_private
    )
    workers.append(
        ("webhooks", lambda stop: run_worker("webhooks", database, stop, sender.run_pass, idle_seconds=0.5))
    )
    projector, exporter = ReportProjector(), ExportWorker()
    workers.append(
        ("reports", lambda stop: run_worker("reports", database, stop, projector.run_pass, idle_seconds=1.0))
    )
    workers.append(
        ("exports", lambda stop: run_worker("exports", database, stop, exporter.run_pass, idle_seconds=1.0))
    )
    if settings.reconcile_interval_seconds > 0:
        reconciler = ReconcileJob(
            chains,
            custody,
            interval=timedelta(seconds=settings.reconcile_interval_seconds),
            audit_retention=timedelta(days=settings.audit_retention_days)
            if settings.audit_retention_days
            else None,
        )
        workers.append(
            (
                "treasury",
                lambda stop: run_worker("treasury", database, stop, reconciler.run_pass, idle_seconds=5.0),
            )
        )
    if settings.sweep_interval_seconds > 0:
        sweeper = Sweeper(chains, custody, fee_ceilings=fee_ceilings(settings), data_dir=settings.data_dir)
        workers.append(
            (
                "sweeps",
                lambda stop: run_worker(
                    "sweeps", database, stop, sweeper.run_pass, idle_seconds=settings.sweep_interval_seconds
                ),
            )
        )
    local = chains.get(LOCAL_CHAIN_ID)
    if local is not None:
        waits = engine_waits(LOCAL_CHAIN_ID)  # mine only while a payout or deposit waits for blocks
        workers.append(("local-chain", lambda stop: local.run_miner(stop, waits=waits)))  # type: ignore[attr-defined]
        if settings.local_rpc_port:
            from appliance.engine.chain.local_rpc import RpcLimits, run_local_rpc

            port, limits = settings.local_rpc_port, RpcLimits(gas_cap=settings.local_rpc_gas_cap)
            workers.append(("local-rpc", lambda stop: run_local_rpc(local, port, stop, limits)))  # type: ignore[arg-type]
    workers.extend(checkpoint_workers(database, settings.sqlite_checkpoint_seconds))
    return workers


# Where a serving process's custody comes from: `serve` hands a client of its signer process (or
# None without a key); anything else (tests, `appliance health`) opens the key in this process.
CustodySource = Callable[[], "CustodyKeys | None"]


def local_custody(settings: Settings, chains: Chains) -> CustodyKeys | None:
    """The key opened in this process, behind the signer's policy (appliance/engine/signer)."""
    # An encrypted key is opened with the passphrase of the settings; nobody is asked here.
    custody = load_for(settings)
    if custody is None:
        return None
    custody.guard_with(guard)  # the fingerprint is recorded, or compared, at first use
    return LocalSigner(custody, chains.assets, settings.signer_gas_cap_wei, settings.data_dir)


def build_runtime(settings: Settings, custody_source: CustodySource | None = None) -> EngineRuntime:
    chains = build_chains(settings)
    custody = custody_source() if custody_source is not None else local_custody(settings, chains)
    master_key = keys.load_or_create_master_key(settings.data_dir)
    return EngineRuntime(
        settings=settings,
        master_key=master_key,
        health=build_health(settings, chains, master_key, custody),
        workers=build_workers(settings, chains, custody, master_key),
        chains=chains,
        custody=custody,
    )


def create_app(settings: Settings, *, custody_source: CustodySource | None = None) -> Flask:
    bind_database(
        database,
        settings.engine_db_url,
        busy_timeout_ms=settings.sqlite_busy_timeout_ms,
        background_checkpoints=settings.sqlite_checkpoint_seconds > 0,
    )
    # The engine's specification names no 422: a malformed value is a 400, whatever is wrong with it.
    app = create_base_app(
        "appliance.engine", render_problem=problems.render, database=database, unprocessable_status=400
    )
    runtime = build_runtime(settings, custody_source)
    runtime.install(app)
    metrics.install(app, settings, engine_metrics.collector(runtime.chains, settings.data_dir))
    for blueprint in AREAS:
        app.register_blueprint(blueprint)

    serve_openapi(
        app,
        lambda: describe_offer(_document(app), app.extensions["engine"].chains),
    )
    return app


def _document(app: Flask) -> dict[str, Any]:
    return build_openapi(
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
                "X-Timestamp (see docs/engine-auth.md). The query string is never signed (it is stripped "
                "before the canonical string is rebuilt): only reads take one (GET /v1/payouts, "
                "/v1/deposits, /v1/reports and the treasury reads), so whoever can alter a request in "
                "transit (a TLS-terminating proxy) can turn a signed read into another read of the same "
                "operator's data, never another operator's and never a write; the signature is admitted "
                "once whatever the query, so the altered request uses it up and the original is then a "
                "replay (401).",
            }
        },
    )
