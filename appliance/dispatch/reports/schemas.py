"""GET /reports/* shapes (docs/reports.md)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from appliance.common.api import QuerySchema

ReportKind = Literal["orders", "cash", "couriers"]


class ReportPath(BaseModel):
    kind: ReportKind


class RangeQuery(QuerySchema):
    start: dt.date = Field(alias="from", description="first day, Yerevan time (YYYY-MM-DD)")
    end: dt.date = Field(
        alias="to", description="the day after the last (the range is [from, to)), at most 366 days"
    )


class CourierSummary(BaseModel):
    courierId: int
    courier: str
    deliveries: int
    failures: int
    failuresByReason: dict[str, int]
    deliveredWithWindow: int
    onTime: int
    onTimeRate: float | None = Field(description="delivered within the window / delivered with a window")
    averagePickupToDeliveryMinutes: float | None


class ReportSummary(BaseModel):
    model_config = {"populate_by_name": True}

    start: str = Field(alias="from")
    end: str = Field(alias="to")
    deliveries: int
    failures: int
    onTimeRate: float | None
    couriers: list[CourierSummary]
