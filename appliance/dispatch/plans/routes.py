"""POST /plans/suggest, /plans/recompute, /plans/move-stop, /plans/apply."""

from __future__ import annotations

from datetime import timedelta

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.plans import schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("plans", __name__)
TAGS = ["Plans"]


def _router():
    return runtime().router


def _max_fix_age() -> timedelta:
    """An older fix is no lane's start: the depot is (as for arrival estimates)."""
    return timedelta(minutes=runtime().settings.eta_max_fix_minutes)


@endpoint(
    bp,
    "POST",
    "/plans/suggest",
    guard=D,
    body=schemas.SuggestRequest,
    body_required=False,
    response=schemas.Suggestion,
    errors=(404, 422, 502),
    tags=TAGS,
)
def suggest(body: schemas.SuggestRequest):
    """Routes for ready orders and active couriers from the solver; writes nothing. Optional steering:
    the day planned, per-courier limits, locked stops and whether lateness is allowed; every order
    left out is in `unplaced` with its reason."""
    rt = runtime()
    return service.suggest(
        rt.router,
        rt.settings,
        current_caller().company_id,
        body.orderIds,
        body.courierIds,
        body.capacity,
        body.serviceMinutes,
        body.shiftHours,
        body.onShift,
        service.PlanOptions(
            day=body.date,
            couriers=service.per_courier([c.model_dump() for c in body.couriers or []]),
            locked=[lock.model_dump() for lock in body.locked or []],
            allow_late=body.late == "allow",
        ),
    )


@endpoint(
    bp,
    "POST",
    "/plans/recompute",
    guard=D,
    body=schemas.RecomputeRequest,
    response=schemas.TimedPlan,
    errors=(404, 422),
    tags=TAGS,
)
def recompute(body: schemas.RecomputeRequest):
    """Re-time every lane along its given sequence; writes nothing."""
    routes = [route.model_dump() for route in body.routes]
    return service.time_plan(
        _router(), current_caller().company_id, routes, body.serviceMinutes, _max_fix_age()
    )


@endpoint(
    bp,
    "POST",
    "/plans/move-stop",
    guard=D,
    body=schemas.MoveStopRequest,
    response=schemas.TimedPlan,
    errors=(404, 422),
    tags=TAGS,
)
def move_stop(body: schemas.MoveStopRequest):
    """Move one stop to a courier's lane at an index (last when omitted) and re-time; writes nothing."""
    routes = [route.model_dump() for route in body.plan.routes]
    return service.move_stop(
        _router(),
        current_caller().company_id,
        routes,
        body.orderId,
        body.toCourierId,
        body.toIndex,
        body.serviceMinutes,
        _max_fix_age(),
    )


@endpoint(
    bp,
    "POST",
    "/plans/apply",
    guard=D,
    body=schemas.ApplyRequest,
    response=schemas.Applied,
    errors=(404, 409, 422),
    tags=TAGS,
)
def apply(body: schemas.ApplyRequest):
    """Assign every stop in the accepted sequence, atomically; a stale plan changes nothing (409)."""
    caller = current_caller()
    return service.apply(caller.company_id, [route.model_dump() for route in body.routes], caller.user.id)
