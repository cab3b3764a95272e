"""The engine's gauges for GET /metrics: payouts, webhook deliveries and exports waiting; the
report projector's and deposit watchers' leases; each chain's head, the deposit watcher's lag
behind it and the embedded chain's miner lease; the treasury's findings and wallet balances;
the sweeps' totals."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common.metrics import DatabaseCollector, Lease, Queue
from appliance.engine.chain.base import ChainError
from appliance.engine.chain.registry import LOCAL_CHAIN_ID, Chains, local_chain_path
from appliance.engine.db import database
from appliance.engine.models import ChainCursor, ExportJob, Payout, Projection, WebhookDelivery
from appliance.engine.outgoing.fencing import fenced_gauge
from appliance.engine.payouts.pipeline import OPEN
from appliance.engine.sweeps.view import sweep_gauges
from appliance.engine.treasury.job import treasury_gauges


def collector(chains: Chains, data_dir: Path) -> DatabaseCollector:
    return DatabaseCollector(
        database,
        queues=[
            Queue("payouts", Payout, lambda: Payout.status.in_(OPEN)),
            Queue("webhooks", WebhookDelivery, lambda: WebhookDelivery.status == "queued"),
            Queue("exports", ExportJob, lambda: ExportJob.status == "PENDING"),
        ],
        leases=[Lease("projection", Projection, "name"), Lease("deposits", ChainCursor, "chain_id")],
        extra=[lambda: chain_gauges(chains, data_dir), fenced_gauge, treasury_gauges, sweep_gauges],
    )


def chain_gauges(chains: Chains, data_dir: Path) -> Iterator[Metric]:
    head = GaugeMetricFamily("appliance_chain_head_block", "The chain's head block number.", labels=["chain"])
    age = GaugeMetricFamily(
        "appliance_chain_head_age_seconds", "Seconds since the head block's timestamp.", labels=["chain"]
    )
    lag = GaugeMetricFamily(
        "appliance_chain_head_lag_blocks",
        "Blocks between the chain's head and the last block the deposit watcher scanned.",
        labels=["chain"],
    )
    up = GaugeMetricFamily(
        "appliance_chain_up", "1 when the chain's node answered this scrape.", labels=["chain"]
    )
    with database.connection_context():
        scanned = {c.chain_id: c.next_block - 1 for c in ChainCursor.select()}
    for chain_id, chain in sorted(chains.chains.items()):
        try:
            ref = chain.head()
        except (ChainError, OSError):
            up.add_metric([chain_id], 0)
            continue
        up.add_metric([chain_id], 1)
        head.add_metric([chain_id], ref.number)
        age.add_metric([chain_id], max(0.0, time.time() - ref.timestamp))
        if chain_id in scanned:
            lag.add_metric([chain_id], max(0, ref.number - scanned[chain_id]))
    yield from (head, age, lag, up)
    if chains.get(LOCAL_CHAIN_ID) is not None:
        yield from _miner_lease(local_chain_path(data_dir))


def _miner_lease(path: Path) -> Iterator[Metric]:
    held = GaugeMetricFamily(
        "appliance_worker_lease_held",
        "1 while the named holder (host/pid/start/id) holds a background job's single-holder lease.",
        labels=["job", "holder"],
    )
    with contextlib.closing(sqlite3.connect(path, timeout=1)) as conn:
        try:
            row = conn.execute("SELECT holder, until FROM lease WHERE name = 'miner'").fetchone()
        except sqlite3.Error:
            row = None
    if row and row[0] and row[1] > time.time():
        held.add_metric([f"miner:{LOCAL_CHAIN_ID}", row[0]], 1)
    yield held
