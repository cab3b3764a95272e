"""Order request and response shapes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, Field, StringConstraints
from pydantic_core import PydanticCustomError

from appliance.common.api import QuerySchema, Schema
from appliance.dispatch.geo_types import LatLon

OrderStatus = Literal[
    "draft", "ready", "assigned", "picked_up", "arrived", "delivered", "failed", "cancelled"
]
FailureReason = Literal["recipient_absent", "refused", "wrong_address", "other"]
Text200 = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Address = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Phone = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40)]
Amount = Annotated[int, Field(ge=0, le=10**12)]
Weight = Annotated[float, Field(ge=0, le=10000)]


def _plausible(value: datetime) -> datetime:
    utc = value.astimezone(UTC) if 1 < value.year < 9999 else None
    if utc is None or not 2000 <= utc.year <= 2999:
        raise PydanticCustomError("datetime_range", "date-time must be between the years 2000 and 2999")
    return utc


# A date-time with its offset (RFC 3339), read as UTC; years 2000..2999.
Moment = Annotated[AwareDatetime, AfterValidator(_plausible)]


class OrderCreate(Schema):
    recipientName: Text200
    recipientPhone: Phone
    amountAmd: Amount = 0
    otpRequired: bool = False
    isCod: bool = False
    codAmountAmd: Amount | None = None
    weightKg: Weight | None = None
    deliveryWindowStart: Moment | None = None
    deliveryWindowEnd: Moment | None = None
    addressLabelHy: Address
    addressLabelEn: Address | None = None
    addressLabelRu: Address | None = None
    pin: LatLon


class OrderPatch(Schema):
    recipientName: Text200 | None = None
    recipientPhone: Phone | None = None
    amountAmd: Amount | None = None
    otpRequired: bool | None = None
    isCod: bool | None = None
    codAmountAmd: Amount | None = None
    weightKg: Weight | None = None
    deliveryWindowStart: Moment | None = None
    deliveryWindowEnd: Moment | None = None
    addressLabelHy: Address | None = None
    addressLabelEn: Address | None = None
    addressLabelRu: Address | None = None
    pin: LatLon | None = None


class LastAttempt(BaseModel):
    courierId: str
    courierName: str
    collectedAmountAmd: int | None


class Proof(BaseModel):
    recipientName: str | None
    hasPhoto: bool
    notes: str | None
    method: Literal["code", "photo", "name"] | None


class OrderOut(BaseModel):
    id: str
    publicId: str
    status: OrderStatus
    recipientName: str
    recipientPhone: str
    amountAmd: int
    otpRequired: bool
    deliveryCodeLocked: bool
    isCod: bool
    codAmountAmd: int
    weightKg: float | None
    deliveryWindowStart: str | None
    deliveryWindowEnd: str | None
    addressLabelHy: str
    addressLabelEn: str | None
    addressLabelRu: str | None
    pin: LatLon
    courierId: str | None
    sequence: int | None
    attempt: int
    failureReason: FailureReason | None
    proof: Proof | None
    collectedAmountAmd: int | None
    lastAttempt: LastAttempt | None = None
    createdAt: str
    updatedAt: str
    finishedAt: str | None


class OrderEnvelope(BaseModel):
    order: OrderOut


class OrderList(BaseModel):
    orders: list[OrderOut]
    hasMore: bool


class OrderListQuery(QuerySchema):
    date: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    limit: Annotated[int, Field(ge=1, le=2000)] | None = None


class StatusChange(Schema):
    status: OrderStatus
    reason: Annotated[str, StringConstraints(max_length=1000)] | None = None


class AssignRequest(Schema):
    courierId: Annotated[int, Field(ge=1)]


class AssignmentOut(BaseModel):
    id: str
    orderId: str
    courierId: str
    sequence: int | None
    status: Literal["active", "cancelled", "done"]
    createdAt: str


class AssignResult(BaseModel):
    assignment: AssignmentOut
    order: OrderOut


class OrderEventOut(BaseModel):
    id: str
    kind: str
    fromStatus: str | None
    toStatus: str | None
    actorUserId: str | None
    data: dict
    createdAt: str


class OrderEvents(BaseModel):
    events: list[OrderEventOut]


class PhotoUrl(BaseModel):
    url: str
    expiresIn: int
