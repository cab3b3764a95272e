"""Report projections, maintained incrementally from the event log (the webhook outbox's events,
which are written in the same transaction as the facts they announce).

Every fact is split into rows that only ever add in one direction, so no total is negative (a
retraction subtracts exactly what its confirmation added):

| event | DEPOSITS | PAYOUTS | FEES (fee asset) | TREASURY and SUMMARY |
|---|---|---|---|---|
| deposit.confirmed | +1, +amount | | | +1, +amount in the deposit's asset |
| deposit.retracted | −1, −amount | | | −1, −amount |
| payout.completed | | +1, +amount | +1, fee | +1, +amount (payout asset); fee in the fee asset |
| payout.failed (reverted, fee paid) | | | +1, fee | fee in the fee asset |

Rows are per operator, asset and UTC day of the event (SUMMARY: one row per asset, period "all").
TREASURY is the volume moved through the operator's treasury per day (in and out, gross); balances
are not per operator here, since the payout wallet is shared by the deployment.

Gaps. The projection reads events above its cursor in id order. On PostgreSQL an id is taken at
insert, not at commit, so an event may become visible after a higher one the cursor has passed.
Every id the cursor passes without seeing it is remembered (``projection_gap``, in the same
transaction as the cursor) and looked up on each pass: applied once it appears, exactly once; after
GAP_TIMEOUT it is forgotten with a warning (the id of a transaction that rolled back never
appears). While an id is missing, ``builtThrough`` stays at the last event below it.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.lease import SingletonLease
from appliance.engine.db import database
from appliance.engine.models import Projection, ProjectionGap, ReportRow, WebhookEvent
from appliance.engine.webhooks.events import (
    DEPOSIT_CONFIRMED,
    DEPOSIT_RETRACTED,
    PAYOUT_COMPLETED,
    PAYOUT_FAILED,
)

log = logging.getLogger("appliance.engine.reports")

REPORT_TYPES = ("DEPOSITS", "PAYOUTS", "TREASURY", "FEES", "SUMMARY")
NAME = "reports"
Key = tuple[str, str, str, str]  # operator, report type, asset, period
# How long an event id passed by the cursor is waited for: far longer than any write transaction.
GAP_TIMEOUT = timedelta(minutes=10)


def facts(event_type: str, body: dict[str, Any]) -> list[tuple[str, str, str, int, int, int]]:
    """(report type, asset, period, Δcount, Δamount, Δfee) rows of one event."""
    data = body["data"]
    day = body["createdAt"][:10]
    out: list[tuple[str, str, str, int, int, int]] = []

    def movement(asset: str, count: int, amount: int, fee: int) -> None:
        out.append(("TREASURY", asset, day, count, amount, fee))
        out.append(("SUMMARY", asset, "all", count, amount, fee))

    if event_type in (DEPOSIT_CONFIRMED, DEPOSIT_RETRACTED):
        sign = 1 if event_type == DEPOSIT_CONFIRMED else -1
        amount = int(data["amountMinor"])
        out.append(("DEPOSITS", data["assetCode"], day, sign, sign * amount, 0))
        movement(data["assetCode"], sign, sign * amount, 0)
    elif event_type in (PAYOUT_COMPLETED, PAYOUT_FAILED):
        fee = int(data.get("networkFeeMinor") or 0)
        fee_asset = data.get("feeAssetCode") or "ETH"
        if event_type == PAYOUT_COMPLETED:
            # What left custody: less or more than the amount for a fee-on-transfer token's
            # COMPLETED_SHORT (debitedMinor; absent from events written before it was kept).
            amount = int(data.get("debitedMinor") or data["amountMinor"])
            out.append(("PAYOUTS", data["asset"], day, 1, amount, 0))
            movement(data["asset"], 1, amount, 0)
        if fee:
            out.append(("FEES", fee_asset, day, 1, 0, fee))
            movement(fee_asset, 0, 0, fee)
    return out


class ReportProjector:
    def __init__(self, *, batch: int = 1000, lease: timedelta = timedelta(seconds=30)) -> None:
        self.batch = batch
        self.lease = lease
        self.projection_lease = SingletonLease.of(Projection, NAME, duration=lease)
        self.holder = self.projection_lease.holder

    def _take_lease(self) -> Projection | None:
        """The projection's row when its lease is ours (created at the first pass), else None."""
        row: Projection | None = self.projection_lease.take_row()
        return row

    def run_pass(self) -> int:
        """Apply the next batch of events, and those of earlier gaps that have appeared; returns
        how many were applied."""
        state = self._take_lease()
        if state is None:
            return 0
        moment = clock.now()  # everything committed before this is in the batch or an earlier one
        last = int(state.last_event_id)
        gaps = {
            int(g.event_id): g.seen_at
            for g in ProjectionGap.select().where(ProjectionGap.name == NAME).order_by(ProjectionGap.event_id)
        }
        late = list(WebhookEvent.select().where(WebhookEvent.id.in_(list(gaps)))) if gaps else []
        events = list(
            WebhookEvent.select().where(WebhookEvent.id > last).order_by(WebhookEvent.id).limit(self.batch)
        )
        new_last = events[-1].id if events else last
        seen = {e.id for e in events}
        missing = [i for i in range(last + 1, new_last) if i not in seen]
        found = {e.id for e in late}
        expired = [i for i, at in gaps.items() if i not in found and moment - at >= GAP_TIMEOUT]
        for event_id in expired:
            log.warning(
                "report projection: event %s never appeared; given up after %s", event_id, GAP_TIMEOUT
            )
        deltas: dict[Key, list[int]] = defaultdict(lambda: [0, 0, 0])
        for event in late + events:
            for report_type, asset, period, count, amount, fee in facts(
                event.event_type, json.loads(event.payload)
            ):
                delta = deltas[(event.operator_id, report_type, asset, period)]
                delta[0] += count
                delta[1] += amount
                delta[2] += fee
        caught_up = len(events) < self.batch
        built_through = moment if caught_up else events[-1].created_at
        outstanding = sorted((set(gaps) - found - set(expired)) | set(missing))
        if outstanding:  # an event below the oldest missing id may still come: not built past it
            below = (
                WebhookEvent.select(WebhookEvent.created_at)
                .where(WebhookEvent.id < outstanding[0])
                .order_by(WebhookEvent.id.desc())
                .first()
            )
            built_through = min(built_through, below.created_at) if below else state.built_through
        with write_transaction(database):
            for (operator, report_type, asset, period), (count, amount, fee) in deltas.items():
                self._add(operator, report_type, asset, period, count, amount, fee, built_through)
            done = list(found) + expired
            if done:
                ProjectionGap.delete().where(
                    (ProjectionGap.name == NAME) & ProjectionGap.event_id.in_(done)
                ).execute()
            if missing:
                ProjectionGap.insert_many(
                    [{"name": NAME, "event_id": i, "seen_at": moment} for i in missing]
                ).execute()
            changed = (
                Projection.update(last_event_id=new_last, built_through=built_through)
                .where((Projection.name == NAME) & (Projection.last_event_id == last))
                .execute()
            )
            if not changed:  # another holder moved on meanwhile (an expired lease): drop this batch
                raise RuntimeError("the report projection moved under this worker")
        return len(late) + len(events)

    @staticmethod
    def _add(
        operator: str,
        report_type: str,
        asset: str,
        period: str,
        count: int,
        amount: int,
        fee: int,
        as_of: Any,
    ) -> None:
        row = ReportRow.get_or_none(
            (ReportRow.operator == operator)
            & (ReportRow.report_type == report_type)
            & (ReportRow.asset_code == asset)
            & (ReportRow.period == period)
        )
        if row is None:
            ReportRow.create(
                operator=operator,
                report_type=report_type,
                asset_code=asset,
                period=period,
                count=count,
                total_amount=str(amount),
                total_fee=str(fee),
                as_of=as_of,
            )
            return
        ReportRow.update(
            count=row.count + count,
            total_amount=str(int(row.total_amount) + amount),
            total_fee=str(int(row.total_fee) + fee),
            as_of=as_of,
        ).where(ReportRow.id == row.id).execute()

    def rebuild(self) -> int:
        """Drop the projection and apply the whole event log again (equals the incremental one);
        returns how many events were applied. The projection's lease is taken in the transaction
        that empties it, so a serving projector waits until the rebuild has finished (and any pass
        of one already under way finds the cursor moved and is rolled back)."""
        with write_transaction(database):
            ReportRow.delete().execute()
            ProjectionGap.delete().where(ProjectionGap.name == NAME).execute()
            Projection.delete().where(Projection.name == NAME).execute()
            Projection.create(name=NAME, holder=self.holder, lease_until=clock.now() + self.lease)
        applied = 0
        while True:
            count = self.run_pass()
            if not count:
                break
            applied += count
        self.projection_lease.release()
        return applied
