"""/health/live and /health/ready: unsigned. Live failing means restart; ready failing means take
out of rotation."""

from __future__ import annotations

from typing import Literal

from flask import Blueprint
from pydantic import BaseModel

from appliance import __version__
from appliance.common.api import endpoint
from appliance.engine.runtime import runtime

SERVICE = "payout-engine"

bp = Blueprint("health", __name__)


class Live(BaseModel):
    status: Literal["pass"]
    service: str


class Ready(BaseModel):
    status: Literal["pass", "fail"]
    service: str
    version: str
    checks: dict[str, Literal["pass", "fail", "not_built"]]


@endpoint(bp, "GET", "/health/live", response=Live, tags=["Health"])
def live():
    """The process answers."""
    return {"status": "pass", "service": SERVICE}


@endpoint(bp, "GET", "/health/ready", response=Ready, errors=(503,), tags=["Health"])
def ready():
    """Every dependency the engine needs answers (503 otherwise)."""
    healthy, checks = runtime().health.run()
    body = {
        "status": "pass" if healthy else "fail",
        "service": SERVICE,
        "version": __version__,
        "checks": {name: check["status"] for name, check in checks.items()},
    }
    return body, 200 if healthy else 503
