"""Report and export shapes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, Field, StringConstraints

from appliance.common.api import QuerySchema, Schema

ReportType = Literal["DEPOSITS", "PAYOUTS", "TREASURY", "FEES", "SUMMARY"]
AssetStr = Annotated[str, StringConstraints(pattern=r"^[A-Z0-9]{2,16}$")]
# jobId: the spec gives no pattern; chosen by the client for idempotency, 8..64 URL-safe characters.
JobIdStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{8,64}$")]


class ReportQuery(QuerySchema):
    type: ReportType
    asset: AssetStr | None = None


class ReportRowBody(BaseModel):
    periodBucket: str = Field(description="UTC day YYYY-MM-DD of the facts; 'all' in SUMMARY")
    assetCode: str
    count: str
    totalAmountMinor: str
    totalFeeMinor: str
    asOfTime: str


class Report(BaseModel):
    operatorId: str
    reportType: ReportType
    builtThrough: str | None = Field(description="complete up to this moment; null when never built")
    rows: list[ReportRowBody]


class ExportRequest(Schema):
    jobId: JobIdStr
    reportType: ReportType
    assetCode: AssetStr
    fromTime: AwareDatetime = Field(description="inclusive; ISO 8601 with an offset")
    toTime: AwareDatetime = Field(description="exclusive; after fromTime")


class ExportPath(BaseModel):
    job_id: JobIdStr


class ExportAccepted(BaseModel):
    jobId: str
    status: Literal["PENDING", "COMPLETE", "FAILED"]
    createdAt: str


class ExportJobBody(ExportAccepted):
    reportType: ReportType
    assetCode: str
    fromTime: str
    toTime: str
    completedAt: str | None
    rowCount: str | None = Field(description="rows of the snapshot, a decimal string; null until COMPLETE")
    downloadUrl: str | None = Field(description="path of the download endpoint once COMPLETE")
    reason: str | None = Field(default=None, description="why a FAILED job failed")
