"""Fee zone shapes (docs/fees.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema
from appliance.dispatch.geo_types import LatLon

ZoneName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), ONE_LINE]
Fee = Annotated[int, Field(ge=0, le=10_000_000)]  # drams; ten million is far beyond any delivery
Threshold = Annotated[float, Field(ge=0, le=10_000)]
BasisPoints = Annotated[int, Field(ge=0, le=10_000, description="hundredths of a percent: 150 is 1.5 %")]
Polygon = Annotated[
    list[LatLon],
    Field(
        min_length=3,
        max_length=200,
        description="the zone's vertices in drawing order, 3 to 200 (a repeated first vertex at the "
        "end is dropped); the edges must not cross (422)",
    ),
]


class FeeZoneCreate(Schema):
    name: ZoneName
    polygon: Polygon
    baseFeeAmd: Fee = 0
    perKmAmd: Fee = Field(default=0, description="per kilometre on roads from the default depot")
    weightThresholdKg: Threshold = 0
    perKgAmd: Fee = Field(default=0, description="per started kilogram above weightThresholdKg")
    codBasisPoints: BasisPoints = 0


class FeeZonePatch(Schema):
    name: ZoneName | None = None
    polygon: Polygon | None = None
    baseFeeAmd: Fee | None = None
    perKmAmd: Fee | None = None
    weightThresholdKg: Threshold | None = None
    perKgAmd: Fee | None = None
    codBasisPoints: BasisPoints | None = None


class FeeZoneOut(BaseModel):
    id: str
    name: str
    polygon: list[LatLon]
    baseFeeAmd: int
    perKmAmd: int
    weightThresholdKg: float
    perKgAmd: int
    codBasisPoints: int
    createdAt: str
    updatedAt: str


class FeeZoneEnvelope(BaseModel):
    zone: FeeZoneOut


class FeeZoneList(BaseModel):
    zones: list[FeeZoneOut]
