"""/health/live and /health/ready: unsigned. Live failing means restart; ready failing means take
out of rotation."""

from __future__ import annotations

from typing import Literal

from flask import Blueprint
from pydantic import BaseModel

from appliance import __version__
from appliance.common.api import endpoint
from appliance.common.problems import Unavailable
from appliance.engine.runtime import runtime

SERVICE = "payout-engine"

bp = Blueprint("health", __name__)


class Live(BaseModel):
    status: Literal["pass"]
    service: str


class Ready(BaseModel):
    status: Literal["pass"]
    service: str
    version: str
    checks: dict[str, Literal["pass", "fail", "not_built"]]


@endpoint(bp, "GET", "/health/live", response=Live, tags=["Health"])
def live():
    """The process answers."""
    return {"status": "pass", "service": SERVICE}


@endpoint(
    bp,
    "GET",
    "/health/ready",
    response=Ready,
    errors=(503,),
    error_notes={503: "A Problem whose members `service`, `version` and `checks` (as on 200) say what fails"},
    tags=["Health"],
)
def ready():
    """Every dependency the engine needs answers (503 otherwise, as a Problem like every error)."""
    healthy, checks = runtime().health.run()
    statuses = {name: check["status"] for name, check in checks.items()}
    if not healthy:
        failing = ", ".join(name for name, status in statuses.items() if status != "pass")
        raise Unavailable(
            f"Not ready: {failing}.",
            extensions={"service": SERVICE, "version": __version__, "checks": statuses},
        )
    return {"status": "pass", "service": SERVICE, "version": __version__, "checks": statuses}
