"""Courier shapes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, EmailStr, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema

Text200 = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
Phone = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE]
CourierPassword = Annotated[str, StringConstraints(min_length=8, max_length=200)]


class LocationOut(BaseModel):
    lat: float
    lon: float
    capturedAt: str
    accuracyM: int | None
    source: str | None


class ShiftOut(BaseModel):
    id: str
    status: Literal["active", "on_break", "ended"]
    startedAt: str
    endedAt: str | None
    endedByName: str | None


class CourierOut(BaseModel):
    id: str
    userId: str | None
    displayName: str
    email: str | None
    phone: str | None
    vehicleLabel: str | None
    photoUrl: str | None
    preferredLanguage: Literal["hy", "ru", "en"]
    onboardingCompleted: bool
    active: bool
    online: bool
    location: LocationOut | None
    shift: ShiftOut | None
    lastShift: ShiftOut | None
    outstandingCashAmd: int
    createdAt: str
    openOrders: int | None = None


class CourierEnvelope(BaseModel):
    courier: CourierOut


class CourierList(BaseModel):
    couriers: list[CourierOut]


class CourierCreate(Schema):
    email: EmailStr = Field(description="the address the courier signs in with")
    password: CourierPassword = Field(
        description=(
            "a company-set password: the courier signs in with it at once, into this company's "
            "courier membership only, until they prove the address (docs/identity.md)"
        )
    )
    displayName: Text200
    phone: Phone | None = None
    vehicleLabel: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=120), ONE_LINE] | None
    ) = None


class CourierPatch(Schema):
    displayName: Text200 | None = None
    phone: Phone | None = None
    vehicleLabel: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=120), ONE_LINE] | None
    ) = None
    active: bool | None = None
    password: CourierPassword | None = Field(
        default=None,
        description=(
            "a new company-set password, for a courier who has not proven their address (409 "
            "address_proven otherwise); the sessions opened with the old one end"
        ),
    )


class EarningsWindow(BaseModel):
    delivered: int
    amountAmd: int = Field(description="the value of the orders delivered (the shop's money), not the pay")
    collectedAmd: int = Field(description="cash collected on delivery")
    payAmd: int | None = Field(
        description="the courier's pay under the company's pay rule (GET /company/pay-rule); null without one"
    )
    payUnits: float | None = Field(description="what was paid for: deliveries, kilometres or hours")


PayBasis = Literal["delivery", "km", "hour"]
PayAmount = Annotated[int, Field(ge=0, le=10**9)]


class PayRuleIn(Schema):
    basis: PayBasis = Field(
        description="delivery: each delivered order; km: the GPS track; hour: open shifts"
    )
    rateAmd: PayAmount = Field(description="drams per delivery, per kilometre or per hour")
    minimumAmd: PayAmount = Field(default=0, description="at least this much for each Yerevan day worked")


class PayRuleOut(BaseModel):
    basis: PayBasis
    rateAmd: int
    minimumAmd: int
    updatedAt: str


class PayRuleEnvelope(BaseModel):
    payRule: PayRuleOut | None


class EarningsOut(BaseModel):
    today: EarningsWindow
    week: EarningsWindow
    allTime: EarningsWindow
    dayStart: str
    weekStart: str
    timeZone: Literal["Asia/Yerevan"]
    payRule: PayRuleOut | None = Field(
        description="the company's pay rule the pay is counted by; null without one"
    )
