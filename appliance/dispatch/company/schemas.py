"""Shapes of company settings, depots and billing."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import ONE_LINE, QuerySchema, Schema
from appliance.dispatch.geo_types import LatLon
from appliance.dispatch.orders.schemas import ProofKind, ProofKinds

Plan = Literal["start", "city", "network"]
HexColor = Annotated[str, StringConstraints(pattern=r"^#[0-9A-Fa-f]{6}$")]
HttpsUrl = Annotated[str, StringConstraints(pattern=r"^https://[^\s]{1,1990}$", max_length=2000)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=120), ONE_LINE]
Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120), ONE_LINE]
Phone = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE]


class CompanyOut(BaseModel):
    id: str
    name: str
    city: str
    phone: str | None
    plan: Plan
    trialEndsAt: str | None
    brandColor: str
    logoUrl: str | None = Field(
        description="external https logo, or a short-lived signed link to the uploaded one"
    )
    hasUploadedLogo: bool
    smsSender: str | None
    smsTemplate: str | None
    supportPhone: str | None
    showCourierPhone: bool
    createdAt: str


class CompanyEnvelope(BaseModel):
    company: CompanyOut


class CompanyPatch(Schema):
    name: Name | None = None
    city: Short | None = None
    phone: Phone | None = None
    brandColor: HexColor | None = None
    logoUrl: HttpsUrl | None = None
    logoKey: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    smsSender: Annotated[str, StringConstraints(max_length=11), ONE_LINE] | None = None
    smsTemplate: Annotated[str, StringConstraints(max_length=480)] | None = None
    supportPhone: Phone | None = None
    showCourierPhone: bool | None = None


class LogoUploadRequest(Schema):
    contentType: Annotated[str, StringConstraints(min_length=1, max_length=100)]


class PresignedUpload(BaseModel):
    key: str
    url: str = Field(description="presigned PUT URL; send the bytes with the same Content-Type")
    expiresIn: int = Field(description="seconds")


class DepotOut(BaseModel):
    id: str
    name: str
    address: str
    point: LatLon
    isDefault: bool
    createdAt: str


class DepotEnvelope(BaseModel):
    depot: DepotOut


class DepotList(BaseModel):
    depots: list[DepotOut]


class DepotCreate(Schema):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
    address: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE]
    point: LatLon
    isDefault: bool = False


class DepotPatch(Schema):
    name: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
        | None
    ) = None
    address: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE]
        | None
    ) = None
    point: LatLon | None = None
    isDefault: Literal[True] | None = None


class PlanRow(BaseModel):
    plan: Plan
    deliveriesPerMonth: int | None
    couriers: int | None
    priceAmd: int | None


class Limits(BaseModel):
    deliveriesPerMonth: int | None
    couriers: int | None


class Usage(BaseModel):
    deliveriesThisMonth: int
    activeCouriers: int
    periodStart: str


class BillingOut(BaseModel):
    plan: Plan
    priceAmd: int | None
    limits: Limits
    usage: Usage
    trialEndsAt: str | None
    trialActive: bool
    invoices: list[dict[str, str]] = Field(description="always empty until a payment provider is connected")
    plans: list[PlanRow]


class BillingEnvelope(BaseModel):
    billing: BillingOut


class PlanChange(Schema):
    plan: Plan


class OrderSettings(BaseModel):
    importStatus: Literal["ready", "draft"] = Field(
        description="what imported orders arrive as (POST /orders/import without ?status=)"
    )
    integrationOrdersReady: bool = Field(
        description="whether orders the company's integration keys create (POST /orders) arrive ready"
    )
    proofRequired: list[ProofKind] = Field(
        description="issue 47: the proof every delivery needs unless its order (or the integration "
        "key that sent it) says otherwise: photo, signature, code, scan, name, age"
    )


class OrderSettingsPatch(Schema):
    importStatus: Literal["ready", "draft"] | None = None
    integrationOrdersReady: bool | None = None
    proofRequired: ProofKinds | None = Field(default=None, description="[] requires nothing")


class AuditQuery(QuerySchema):
    after: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,18}$")] = Field(
        default="0", description="the id of the last entry already read (0: from the oldest kept)"
    )
    limit: int = Field(default=100, ge=1, le=500)


class AuditEntryOut(BaseModel):
    id: str
    at: str = Field(description="UTC, ISO 8601 with microseconds")
    actorKind: Literal["user", "integration_key", "administrator"]
    actor: str = Field(description="user:ID email, key:ID, or the OS user@host of a command")
    action: str = Field(description="e.g. member.changed, company.settings_changed, report.exported")
    subject: str
    before: dict | None
    after: dict | None
    origin: str = Field(description="http:ADDRESS of the request, or cli:USER@HOST")
    hash: str = Field(description="SHA-256 of the entry and the previous entry's hash")


class AuditPage(BaseModel):
    entries: list[AuditEntryOut]
    next: str | None = Field(description="pass as ?after= for the next page; null at the end")
