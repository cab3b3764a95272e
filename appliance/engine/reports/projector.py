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
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.common.compiled import insert_if_new
from appliance.common.db import locked, write_transaction
from appliance.common.holders import instance_holder
from appliance.common.jobs import held_by_another
from appliance.engine.db import database
from appliance.engine.models import Projection, ReportRow, WebhookEvent
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
            amount = int(data["amountMinor"])
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
        self.holder = instance_holder()

    def _take_lease(self) -> Projection | None:
        moment = clock.now()
        with write_transaction(database):
            state = locked(Projection.select().where(Projection.name == NAME)).first()
            if state is None:
                # Another process starting at the same moment may create it first: then it is theirs.
                state = Projection(name=NAME, holder=self.holder, lease_until=moment + self.lease)
                return state if insert_if_new(state) else None
            if held_by_another(state.holder, state.lease_until, moment, self.holder):
                return None
            Projection.update(holder=self.holder, lease_until=moment + self.lease).where(
                Projection.name == NAME
            ).execute()
            return Projection.get_by_id(NAME)

    def run_pass(self) -> int:
        """Apply the next batch of events; returns how many were applied."""
        state = self._take_lease()
        if state is None:
            return 0
        moment = clock.now()  # everything committed before this is in the batch or an earlier one
        events = list(
            WebhookEvent.select()
            .where(WebhookEvent.id > state.last_event_id)
            .order_by(WebhookEvent.id)
            .limit(self.batch)
        )
        deltas: dict[Key, list[int]] = defaultdict(lambda: [0, 0, 0])
        for event in events:
            for report_type, asset, period, count, amount, fee in facts(
                event.event_type, json.loads(event.payload)
            ):
                delta = deltas[(event.operator_id, report_type, asset, period)]
                delta[0] += count
                delta[1] += amount
                delta[2] += fee
        caught_up = len(events) < self.batch
        built_through = moment if caught_up else events[-1].created_at
        with write_transaction(database):
            for (operator, report_type, asset, period), (count, amount, fee) in deltas.items():
                self._add(operator, report_type, asset, period, count, amount, fee, built_through)
            changed = (
                Projection.update(
                    last_event_id=events[-1].id if events else state.last_event_id,
                    built_through=built_through,
                )
                .where((Projection.name == NAME) & (Projection.last_event_id == state.last_event_id))
                .execute()
            )
            if not changed:  # another holder moved on meanwhile (an expired lease): drop this batch
                raise RuntimeError("the report projection moved under this worker")
        return len(events)

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

    def rebuild(self) -> None:
        """Drop the projection and apply the whole event log again (equals the incremental one)."""
        with write_transaction(database):
            ReportRow.delete().execute()
            Projection.delete().where(Projection.name == NAME).execute()
        while self.run_pass() == self.batch:
            pass
