"""Plan shapes (DraftPlan, TimedPlan and the requests around them)."""

from __future__ import annotations

from datetime import date, time
from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import Id, Schema
from appliance.dispatch.geo_types import LatLon

IdStr = Annotated[str, StringConstraints(min_length=1, max_length=20)]
ServiceMinutes = Annotated[float, Field(ge=0, le=240)]


Capacity = Annotated[int, Field(ge=1, le=200)]
PlanDay = date  # a name of its own: a field below is called ``date``


class CourierPlan(Schema):
    """One courier's own limits in a suggestion; every field left out takes the plan-wide value."""

    courierId: Id
    capacity: Capacity | None = Field(default=None, description="stops this courier may hold")
    capacityKg: Annotated[float, Field(gt=0, le=10000)] | None = Field(
        default=None, description="total weight this courier may carry (orders without a weight count 0)"
    )
    shiftStart: time | None = Field(
        default=None,
        description=(
            "HH:MM in Yerevan on the plan's day (today: never before now); default now, or 09:00 on a "
            "later day"
        ),
    )
    shiftEnd: time | None = Field(
        default=None, description="HH:MM in Yerevan on the plan's day; default shiftStart plus shiftHours"
    )
    serviceMinutes: ServiceMinutes | None = None
    start: Literal["gps", "depot"] | LatLon | None = Field(
        default=None,
        description=(
            "where the lane starts: the fresh GPS fix (else the depot), the default depot, or a point; "
            "default gps today, depot on a later day"
        ),
    )
    returnToDepot: bool | None = Field(
        default=None, description="the lane ends back at its start (default false: it ends at its last stop)"
    )


class LockedStop(Schema):
    orderId: Id
    courierId: Id
    index: Annotated[int, Field(ge=0, le=199)] = Field(description="position in the courier's lane, 0 first")


class SuggestRequest(Schema):
    orderIds: Annotated[list[Id], Field(min_length=1, max_length=1000)] | None = None
    courierIds: Annotated[list[Id], Field(min_length=1, max_length=20)] | None = None
    capacity: Capacity = 10  # stops per courier
    serviceMinutes: ServiceMinutes = 5
    shiftHours: Annotated[float, Field(gt=0, le=24)] = 8
    onShift: bool = Field(
        default=True,
        description="without courierIds: only active couriers on shift (false: every active courier)",
    )
    date: PlanDay | None = Field(
        default=None,
        description=(
            "the Yerevan day to plan (today or later): the ready orders whose delivery window falls on "
            "that day, or that have none. Omitted: every ready order from now, as without it. On a "
            "later day every active courier is planned, on shift or not, from the depot at 09:00"
        ),
    )
    couriers: Annotated[list[CourierPlan], Field(min_length=1, max_length=20)] | None = Field(
        default=None,
        description=(
            "per-courier limits overriding the plan-wide ones; without courierIds, the couriers planned"
        ),
    )
    locked: Annotated[list[LockedStop], Field(max_length=1000)] | None = Field(
        default=None, description="stops that stay with their courier at their position"
    )
    late: Literal["forbid", "allow"] = Field(
        default="forbid",
        description=(
            "allow: an order whose window cannot be met is delivered late (lateSeconds), not left out"
        ),
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
    source: Literal["gps", "depot", "city_centre", "point"] = Field(
        description="point: the start a suggestion's couriers entry gave"
    )


class TimedStop(BaseModel):
    orderId: str
    etaSeconds: int | None
    expectedAt: str | None = Field(
        default=None,
        description=(
            "beyond the specification's fields: when the courier is expected to hand over, counting "
            "the service at earlier stops and the waits where the courier is early for a window (this "
            "stop's or an earlier one's), as the planner times a lane; given by recompute and move-stop, "
            "whose etaSeconds are the road estimate (a suggestion's etaSeconds already count the waits)"
        ),
    )


class TimedRoute(BaseModel):
    courierId: str
    start: Start
    stops: list[TimedStop]
    durationSeconds: int


class TimedPlan(BaseModel):
    routes: list[TimedRoute]
    method: Literal["road", "straight_line"]


class SuggestedStop(TimedStop):
    lateSeconds: int | None = Field(
        default=None, description='only with late "allow": seconds after the window closes (0 when on time)'
    )


class SuggestedRoute(BaseModel):
    courierId: str
    start: Start
    capacity: int = Field(description="stops a courier may hold (the request's or the courier's capacity)")
    held: int = Field(description="open orders the courier already holds; they use the capacity")
    stops: list[SuggestedStop]


UnplacedReason = Literal["capacity", "window", "shift_end", "unreachable", "not_ready", "over_limit"]


class Unplaced(BaseModel):
    orderId: str
    reason: UnplacedReason = Field(
        description=(
            "capacity: no courier has room (stops or weight); window: its window cannot be met; "
            "shift_end: no courier's shift reaches it; unreachable: no road reaches it; not_ready: the "
            "listed order is not ready; over_limit: beyond the 1,000 oldest ready orders"
        )
    )


class Suggestion(BaseModel):
    suggested: Literal[True]
    routes: list[SuggestedRoute]
    unassigned: list[str]
    unplaced: list[Unplaced] = Field(description="every unassigned order with the reason it was left out")
    timesFrom: str | None = Field(
        default=None,
        description=(
            "only with date: the moment etaSeconds count from (now today; the day's midnight in Yerevan "
            "on a later day)"
        ),
    )
    method: Literal["road", "straight_line"] = Field(
        description="how the travel times were estimated: road routing or the straight-line fallback"
    )


class AppliedStop(BaseModel):
    orderId: str
    courierId: str
    sequence: int


class Applied(BaseModel):
    applied: list[AppliedStop]
