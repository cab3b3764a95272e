"""The reconcile job of `appliance serve`, its readiness check and its metrics.

The job is one row (treasury_run 'reconcile') with a single-holder lease: every serving process
runs the loop, and the one that takes the lease when the run is due reconciles (a deployment of
several processes or nodes reconciles once per interval, not once per process).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta

from prometheus_client.core import GaugeMetricFamily, Metric

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.health import Check
from appliance.common.lease import SingletonLease
from appliance.engine.chain.registry import Chains
from appliance.engine.custody import CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import TreasuryBalance, TreasuryFinding, TreasuryRun
from appliance.engine.treasury.reconcile import CRITICAL, KINDS, RUN, is_open, reconcile

log = logging.getLogger("appliance.engine.treasury")


class ReconcileJob:
    def __init__(
        self,
        chains: Chains,
        custody: CustodyKeys | None,
        *,
        interval: timedelta,
        lease: timedelta = timedelta(minutes=10),
        audit_retention: timedelta | None = None,
    ) -> None:
        self.chains = chains
        self.audit_retention = audit_retention
        self.custody = custody
        self.interval = interval
        self.lease = lease
        self.run_lease = SingletonLease.of(TreasuryRun, RUN, duration=lease)

    def run_pass(self) -> int:
        """Reconcile if due and the lease is ours; 1 when it ran, else 0."""
        if not self._take_lease():
            return 0
        error: str | None = None
        try:
            reconcile(self.chains, self.custody)
        except Exception as exc:  # the lease is released and the next run retried all the same
            faults.log_failure(log, exc, "treasury: reconcile")
            error = f"{type(exc).__name__}: {exc}"[:500]
        if self.audit_retention is not None:
            self._prune_audit(self.audit_retention)
        with write_transaction(database):
            self.run_lease.release(next_run_at=clock.now() + self.interval, last_error=error)
        return 1

    def _prune_audit(self, retention: timedelta) -> None:
        """The engine's audit entries older than audit_retention_days go, with the run's lease (one
        node at a time); the chain's anchor moves past them (appliance/common/audit.py)."""
        from appliance.common import audit
        from appliance.engine.models.audit import AuditAnchor, AuditEntry

        try:
            with write_transaction(database):
                audit.prune(AuditEntry, AuditAnchor, clock.now() - retention)
        except Exception as exc:  # retried at the next run
            faults.log_failure(log, exc, "treasury: audit retention")

    def _take_lease(self) -> bool:
        """The run's lease, when the run is due (``next_run_at`` has come)."""
        return self.run_lease.take(
            due=lambda row, moment: row.next_run_at is None or row.next_run_at <= moment,
            create={"checked_at": None, "next_run_at": None, "last_error": None},
        )


def treasury_probe() -> Check:
    """Readiness: fails while an open (unacknowledged, unresolved) critical finding exists (an
    administrator must look: `appliance reconcile`)."""
    with database.connection_context():
        critical = list(TreasuryFinding.select().where(TreasuryFinding.critical & is_open()))
    if not critical:
        return Check("pass")
    kinds = Counter(row.kind for row in critical)
    return Check(
        "fail",
        detail="critical reconciliation findings: "
        + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        + " (appliance reconcile --json)",
        data={"findings": dict(sorted(kinds.items()))},
    )


def treasury_gauges() -> Iterator[Metric]:
    findings = GaugeMetricFamily(
        "appliance_treasury_findings",
        "Unacknowledged reconciliation findings by kind (critical ones fail /health/ready).",
        labels=["kind", "critical"],
    )
    balance = GaugeMetricFamily(
        "appliance_treasury_wallet_balance_minor",
        "A custody wallet's balance of an asset in minor units, as the last reconciliation read it "
        "(a float: exact figures are in `appliance treasury --json`).",
        labels=["chain", "asset", "role", "address"],
    )
    low = GaugeMetricFamily(
        "appliance_treasury_low_balance",
        "1 while the wallet holds less than the asset's low_balance_minor or its open payouts need.",
        labels=["chain", "asset", "role", "address"],
    )
    checked = GaugeMetricFamily(
        "appliance_treasury_reconciled_timestamp_seconds",
        "Unix time of the last reconciliation.",
    )
    with database.connection_context():
        counts = Counter((row.kind, row.critical) for row in TreasuryFinding.select().where(is_open()))
        wallets = list(TreasuryBalance.select())
        run = TreasuryRun.get_or_none(TreasuryRun.name == RUN)
    for kind in KINDS:
        findings.add_metric([kind, str(kind in CRITICAL).lower()], counts.get((kind, kind in CRITICAL), 0))
    for w in wallets:
        labels = [w.chain_id, w.asset_code, w.role, w.address]
        balance.add_metric(labels, float(int(w.on_chain_minor)))
        low.add_metric(labels, 1 if w.low_balance else 0)
    if run is not None and run.checked_at is not None:
        checked.add_metric([], run.checked_at.timestamp())
    yield from (findings, balance, low, checked)
