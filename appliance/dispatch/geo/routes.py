"""POST /geo/route, /geo/matrix, /geo/optimize (dispatchers, owners and couriers)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import DC
from appliance.dispatch.geo import schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("geo", __name__)


def _router():
    return runtime().router


@endpoint(
    bp,
    "POST",
    "/geo/route",
    body=schemas.RouteRequest,
    response=schemas.RouteResponse,
    guard=DC,
    tags=["Geo"],
)
def geo_route(body: schemas.RouteRequest):
    """Road route through 2..25 points (OSRM route shape, precision-6 polyline)."""
    return service.route(_router(), [p.point for p in body.coordinates])


@endpoint(
    bp,
    "POST",
    "/geo/matrix",
    body=schemas.MatrixRequest,
    response=schemas.MatrixResponse,
    guard=DC,
    tags=["Geo"],
)
def geo_matrix(body: schemas.MatrixRequest):
    """Road durations and distances from up to 100 sources to up to 100 destinations (OSRM table shape)."""
    return service.matrix(_router(), [p.point for p in body.sources], [p.point for p in body.destinations])


@endpoint(
    bp,
    "POST",
    "/geo/optimize",
    body=schemas.OptimizeRequest,
    response=schemas.OptimizeResponse,
    guard=DC,
    errors=(502,),
    tags=["Geo"],
)
def geo_optimize(body: schemas.OptimizeRequest):
    """Best visiting order of up to 50 stops from a start (trip-like shape)."""
    return service.optimize(
        _router(),
        body.start.point,
        [p.point for p in body.stops],
        roundtrip=body.roundtrip,
        service_s=int(body.serviceMinutes * 60),
        time_limit=runtime().settings.solver_time_limit_seconds,
    )
