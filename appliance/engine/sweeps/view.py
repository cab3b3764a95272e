"""What the administrator sees of the sweeps: `appliance sweeps --json` and the /metrics gauges."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common import clock
from appliance.engine.db import database
from appliance.engine.models import Broadcast, Sweep
from appliance.engine.sweeps.planning import OPEN

STATUSES = ("skipped", "topping_up", "signed", "sent", "completed", "failed")


def sweep_body(row: Sweep, topup_hash: str | None) -> dict[str, Any]:
    return {
        "sweepId": str(row.id),
        "chainId": row.chain_id,
        "assetCode": row.asset_code,
        "address": row.address,
        "status": row.status,
        "amountMinor": row.amount_minor,
        "feeMinor": row.fee_minor,
        "topupMinor": row.topup_minor,
        "txHash": row.tx_hash,
        "topupTxHash": topup_hash,
        "reason": row.reason,
        "createdAt": clock.iso(row.created_at),
        "updatedAt": clock.iso(row.updated_at),
    }


def totals() -> list[dict[str, Any]]:
    """Per chain and asset: the amount swept (completed sweeps), and how many are completed,
    open (in flight), failed."""
    swept: dict[tuple[str, str], int] = defaultdict(int)
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"completed": 0, "open": 0, "failed": 0}
    )
    rows = Sweep.select(Sweep.chain_id, Sweep.asset_code, Sweep.status, Sweep.amount_minor).where(
        Sweep.status != "skipped"
    )
    for chain_id, code, status, amount in rows.tuples():
        key = (chain_id, code)
        if status == "completed":
            swept[key] += int(amount or 0)
            counts[key]["completed"] += 1
        elif status in OPEN:
            counts[key]["open"] += 1
        else:
            counts[key]["failed"] += 1
    return [
        {"chainId": c, "assetCode": a, "sweptMinor": str(swept[(c, a)]), **counts[(c, a)]}
        for c, a in sorted(counts)
    ]


def recent(limit: int = 50, status: str | None = None) -> dict[str, Any]:
    """The newest sweeps first (skipped ones only when asked for by status), with the totals."""
    query = Sweep.select().order_by(Sweep.id.desc()).limit(limit)
    query = query.where(Sweep.status == status) if status else query.where(Sweep.status != "skipped")
    rows = list(query)
    topups = {
        b.id: b.tx_hash
        for b in Broadcast.select(Broadcast.id, Broadcast.tx_hash).where(
            Broadcast.id.in_([r.topup_id for r in rows if r.topup_id is not None])
        )
    }
    return {
        "sweeps": [sweep_body(r, topups.get(r.topup_id)) for r in rows],
        "totals": totals(),
    }


def sweep_gauges() -> Iterator[Metric]:
    swept = GaugeMetricFamily(
        "appliance_sweeps_swept_minor",
        "Minor units swept into the payout wallet by completed sweeps (a float: exact figures are "
        "in `appliance sweeps --json`).",
        labels=["chain", "asset"],
    )
    pending = GaugeMetricFamily(
        "appliance_sweeps_pending",
        "Sweeps in flight (gas top-up or sweep transaction not final yet).",
        labels=["chain", "asset"],
    )
    failed = GaugeMetricFamily("appliance_sweeps_failed", "Sweeps that failed.", labels=["chain", "asset"])
    with database.connection_context():
        rows = totals()
    for row in rows:
        labels = [row["chainId"], row["assetCode"]]
        swept.add_metric(labels, float(int(row["sweptMinor"])))
        pending.add_metric(labels, row["open"])
        failed.add_metric(labels, row["failed"])
    yield from (swept, pending, failed)
