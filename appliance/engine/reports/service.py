"""GET /v1/reports: the caller's rows of one projection, inside the query."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.engine.models import Projection, ReportRow
from appliance.engine.reports.projector import NAME


def report(operator_id: str, report_type: str, asset: str | None) -> dict[str, Any]:
    state = Projection.get_or_none(Projection.name == NAME)
    query = ReportRow.select().where(
        (ReportRow.operator == operator_id) & (ReportRow.report_type == report_type)
    )
    if asset:
        query = query.where(ReportRow.asset_code == asset)
    rows = [
        {
            "periodBucket": r.period,
            "assetCode": r.asset_code,
            "count": str(r.count),
            "totalAmountMinor": r.total_amount,
            "totalFeeMinor": r.total_fee,
            "asOfTime": clock.iso(r.as_of),
        }
        for r in query.order_by(ReportRow.period, ReportRow.asset_code)
    ]
    return {
        "operatorId": operator_id,
        "reportType": report_type,
        "builtThrough": clock.iso(state.built_through) if state else None,
        "rows": rows,
    }
