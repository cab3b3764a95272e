"""Request and response shapes of the geo proxies (OSRM-like route and table, trip-like optimise)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from appliance.common.api import Schema
from appliance.dispatch.geo_types import LatLon

MAX_ROUTE_POINTS = 25
MAX_MATRIX_SIDE = 100
MAX_OPTIMIZE_STOPS = 50

Method = Literal["road", "straight_line"]


class RouteRequest(Schema):
    coordinates: Annotated[list[LatLon], Field(min_length=2, max_length=MAX_ROUTE_POINTS)]


class RouteLeg(BaseModel):
    duration: float = Field(description="seconds")
    distance: float = Field(description="metres")


class RouteOut(BaseModel):
    duration: float = Field(description="seconds")
    distance: float = Field(description="metres")
    geometry: str = Field(description="encoded polyline, precision 6")
    legs: list[RouteLeg]


class RouteResponse(BaseModel):
    code: Literal["Ok"]
    method: Method
    routes: list[RouteOut]


class MatrixRequest(Schema):
    sources: Annotated[list[LatLon], Field(min_length=1, max_length=MAX_MATRIX_SIDE)]
    destinations: Annotated[list[LatLon], Field(min_length=1, max_length=MAX_MATRIX_SIDE)]


class MatrixResponse(BaseModel):
    code: Literal["Ok"]
    method: Method
    durations: list[list[float]] = Field(description="seconds, sources x destinations")
    distances: list[list[float]] = Field(description="metres, sources x destinations")


class OptimizeRequest(Schema):
    start: LatLon
    stops: Annotated[list[LatLon], Field(min_length=1, max_length=MAX_OPTIMIZE_STOPS)]
    roundtrip: bool = False
    serviceMinutes: Annotated[float, Field(ge=0, le=240)] = 0


class OptimizeWaypoint(BaseModel):
    stopIndex: int = Field(description="index of the stop in the request")
    waypointIndex: int = Field(description="position in the optimised trip (1 = first stop)")
    arrivalSeconds: int


class OptimizeTrip(BaseModel):
    duration: float
    distance: float
    geometry: str


class OptimizeResponse(BaseModel):
    code: Literal["Ok"]
    method: Method
    trips: list[OptimizeTrip]
    waypoints: list[OptimizeWaypoint]
