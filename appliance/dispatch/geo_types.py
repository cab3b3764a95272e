"""Coordinates of the service area (Armenia): every operation that takes coordinates refuses
points outside it with 422 (the ``service_area`` validation error type)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict
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


Latitude = Annotated[float, AfterValidator(_latitude)]
Longitude = Annotated[float, AfterValidator(_longitude)]


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
