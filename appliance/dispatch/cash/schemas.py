"""Cash on delivery shapes: settlements (handovers), the courier's balance and collections."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import QuerySchema, Schema


class SettlementQuery(QuerySchema):
    status: Literal["submitted", "confirmed"] = "submitted"


class ConfirmRequest(Schema):
    receivedAmd: Annotated[int, Field(ge=0, le=10**12)] | None = Field(
        default=None, description="defaults to the submitted amount (expectedAmd)"
    )
    note: Annotated[str, StringConstraints(max_length=1000)] | None = Field(
        default=None, description="required when receivedAmd is below expectedAmd"
    )


class CoveredCollection(BaseModel):
    orderId: str
    publicId: str
    amountAmd: int
    collectedAt: str


class SettlementOut(BaseModel):
    id: str
    courierId: str
    courierName: str
    status: Literal["submitted", "confirmed"]
    expectedAmd: int = Field(description="what to count: collections covered plus a carried shortfall")
    receivedAmd: int | None = Field(description="once confirmed")
    shortfallAmd: int | None = Field(description="once confirmed; stays on the courier's balance")
    note: str | None
    acceptedByName: str | None = Field(description="the dispatcher who confirmed it")
    submittedAt: str
    confirmedAt: str | None
    orders: list[CoveredCollection] = Field(description="collections covered by this handover")


class SettlementEnvelope(BaseModel):
    settlement: SettlementOut


class SettlementList(BaseModel):
    settlements: list[SettlementOut]


class ConfirmResult(BaseModel):
    settlement: SettlementOut
    courierOutstandingAmd: int


class CollectionOut(BaseModel):
    orderId: str
    publicId: str
    amountAmd: int
    collectedAt: str
    settled: bool = Field(description="covered by a submitted or confirmed handover")


class CashSummary(BaseModel):
    outstandingAmd: int = Field(
        description="unsettled collections plus a carried shortfall (an awaiting handover included)"
    )
    openSettlement: SettlementOut | None
    unrecordedAmd: int = Field(
        default=0,
        description="cash the courier holds for deliveries the server refused (orders flagged "
        "needsAttention), not yet recorded as collections",
    )
    recentCollections: list[CollectionOut] = Field(description="the latest 50, newest first")
