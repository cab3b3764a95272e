"""Coordinates of the service area (Armenia): every operation that takes coordinates refuses
points outside it with 422 (the ``service_area`` validation error type)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

LAT_MIN, LAT_MAX = 38.8, 41.4
LON_MIN, LON_MAX = 43.4, 46.7


def in_service_area(lat: float, lon: float) -> bool:
    return LAT_MIN <= lat <= LAT_MAX and LON_MIN <= lon <= LON_MAX


def _latitude(value: float) -> float:
    if not LAT_MIN <= value <= LAT_MAX:
        raise PydanticCustomError("service_area", "latitude must be within 38.8..41.4 (the service area)")
    return value


def _longitude(value: float) -> float:
    if not LON_MIN <= value <= LON_MAX:
        raise PydanticCustomError("service_area", "longitude must be within 43.4..46.7 (the service area)")
    return value


# The bounds stand in the JSON schema too, so that the OpenAPI document says them and clients (and
# generated test data) keep inside; the validators give the refusal its service-area message, and
# x-unprocessable tells the document's builder that a point outside is a 422 (common/api.py).
OUTSIDE = "outside the service area"
Latitude = Annotated[
    float,
    AfterValidator(_latitude),
    Field(json_schema_extra={"minimum": LAT_MIN, "maximum": LAT_MAX, "x-unprocessable": OUTSIDE}),
]
Longitude = Annotated[
    float,
    AfterValidator(_longitude),
    Field(json_schema_extra={"minimum": LON_MIN, "maximum": LON_MAX, "x-unprocessable": OUTSIDE}),
]


class LatLon(BaseModel):
    """A point inside the service area."""

    model_config = ConfigDict(strict=True, extra="ignore")

    lat: Latitude
    lon: Longitude

    @property
    def point(self) -> tuple[float, float]:
        return (self.lat, self.lon)

    @classmethod
    def of(cls, lat: float, lon: float) -> dict[str, Any]:
        return {"lat": lat, "lon": lon}
