"""Plan shapes (DraftPlan, TimedPlan and the requests around them)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import Id, Schema

IdStr = Annotated[str, StringConstraints(min_length=1, max_length=20)]
ServiceMinutes = Annotated[float, Field(ge=0, le=240)]


class SuggestRequest(Schema):
    orderIds: Annotated[list[Id], Field(min_length=1, max_length=1000)] | None = None
    courierIds: Annotated[list[Id], Field(min_length=1, max_length=20)] | None = None
    capacity: Annotated[int, Field(ge=1, le=200)] = 10  # stops per courier
    serviceMinutes: ServiceMinutes = 5
    shiftHours: Annotated[float, Field(gt=0, le=24)] = 8
    onShift: bool = Field(
        default=True,
        description="without courierIds: only active couriers on shift (false: every active courier)",
    )


class DraftStop(Schema):
    orderId: IdStr


class DraftRoute(Schema):
    courierId: IdStr
    stops: Annotated[list[DraftStop], Field(max_length=200)]


class DraftPlan(Schema):
    routes: Annotated[list[DraftRoute], Field(min_length=1, max_length=20)]


class RecomputeRequest(DraftPlan):
    serviceMinutes: ServiceMinutes = 5


class MoveStopRequest(Schema):
    plan: DraftPlan
    orderId: IdStr
    toCourierId: IdStr
    toIndex: Annotated[int, Field(ge=0)] | None = None
    serviceMinutes: ServiceMinutes = 5


class ApplyStop(Schema):
    orderId: Annotated[int, Field(ge=1)]
    sequence: Annotated[int, Field(ge=1)]


class ApplyRoute(Schema):
    courierId: Annotated[int, Field(ge=1)]
    stops: Annotated[list[ApplyStop], Field(min_length=1, max_length=200)]


class ApplyRequest(Schema):
    routes: Annotated[list[ApplyRoute], Field(min_length=1, max_length=20)]


class Start(BaseModel):
    lat: float
    lon: float
    source: Literal["gps", "depot", "city_centre"]


class TimedStop(BaseModel):
    orderId: str
    etaSeconds: int | None


class TimedRoute(BaseModel):
    courierId: str
    start: Start
    stops: list[TimedStop]
    durationSeconds: int


class TimedPlan(BaseModel):
    routes: list[TimedRoute]
    method: Literal["road", "straight_line"]


class SuggestedRoute(BaseModel):
    courierId: str
    start: Start
    capacity: int = Field(description="stops a courier may hold (the request's capacity)")
    held: int = Field(description="open orders the courier already holds; they use the capacity")
    stops: list[TimedStop]


class Suggestion(BaseModel):
    suggested: Literal[True]
    routes: list[SuggestedRoute]
    unassigned: list[str]
    method: Literal["road", "straight_line"] = Field(
        description="how the travel times were estimated: road routing or the straight-line fallback"
    )


class AppliedStop(BaseModel):
    orderId: str
    courierId: str
    sequence: int


class Applied(BaseModel):
    applied: list[AppliedStop]
