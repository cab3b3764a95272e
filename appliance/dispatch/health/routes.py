"""GET /healthz: readiness of the road-routing engine, the route solver, the database and the map
tiles; 200 when all pass, 503 naming what does not."""

from __future__ import annotations

from typing import Literal

from flask import Blueprint
from pydantic import BaseModel

from appliance.common.api import endpoint
from appliance.dispatch.runtime import runtime

bp = Blueprint("health", __name__)


class HealthCheck(BaseModel):
    status: Literal["pass", "fail", "not_built"]
    detail: str | None = None


class HealthReport(BaseModel):
    status: Literal["pass", "degraded"]
    checks: dict[str, HealthCheck]
    failing: list[str]


@endpoint(bp, "GET", "/healthz", response=HealthReport, errors=(503,), tags=["Service"])
def healthz():
    """Readiness of routing, solver, database and map tiles (503 when any is degraded)."""
    healthy, checks = runtime().health.run()
    failing = [name for name, check in checks.items() if check["status"] != "pass"]
    body = {"status": "pass" if healthy else "degraded", "checks": checks, "failing": failing}
    return body, 200 if healthy else 503
