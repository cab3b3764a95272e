"""GET /healthz: readiness of the road-routing engine, the route solver, the database and the map
tiles; 200 when all pass, else 503: a Problem (as every error) whose extension members ``checks``
and ``failing`` name what does not pass.

The answer is public (a load balancer probes it), so by default each check says only its status;
its detail (an error's text, timings, the bucket's name) is for a local client or one showing the
metrics token. Results are kept for about a second (appliance/common/health.py)."""

from __future__ import annotations

from typing import Literal

from flask import Blueprint
from pydantic import BaseModel

from appliance.common.api import endpoint
from appliance.common.metrics import may_see_details
from appliance.common.problems import Unavailable
from appliance.dispatch.runtime import runtime

bp = Blueprint("health", __name__)


class HealthCheck(BaseModel):
    status: Literal["pass", "fail", "not_built"]
    detail: str | None = None


class HealthReport(BaseModel):
    status: Literal["pass"]
    checks: dict[str, HealthCheck]
    failing: list[str]


@endpoint(
    bp,
    "GET",
    "/healthz",
    response=HealthReport,
    errors=(503,),
    error_notes={503: "A Problem whose members `checks` (as on 200) and `failing` name what does not pass"},
    tags=["Service"],
)
def healthz():
    """Readiness of routing, solver, database and map tiles (503 when any is degraded)."""
    rt = runtime()
    healthy, checks = rt.health.run()
    if not may_see_details(rt.settings):
        checks = {name: {"status": check["status"]} for name, check in checks.items()}
    failing = [name for name, check in checks.items() if check["status"] != "pass"]
    if not healthy:
        raise Unavailable(
            "Degraded: " + ", ".join(failing) + ".", extensions={"checks": checks, "failing": failing}
        )
    return {"status": "pass", "checks": checks, "failing": failing}
