"""GET /couriers/{id}/eta (dispatchers) and GET /courier/eta (the courier)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from flask import Blueprint
from pydantic import BaseModel, Field

from appliance.common.api import endpoint
from appliance.common.problems import Forbidden
from appliance.dispatch.auth.guards import C, D, current_caller
from appliance.dispatch.couriers.service import own_courier
from appliance.dispatch.eta.service import courier_eta
from appliance.dispatch.runtime import runtime

bp = Blueprint("eta", __name__)
TAGS = ["Estimates"]


class Origin(BaseModel):
    lat: float
    lon: float
    source: Literal["gps", "depot"]
    capturedAt: str | None
    staleFixAt: str | None = Field(
        default=None,
        description="the stale fix's time when the depot stands in (fix older than eta_max_fix_minutes)",
    )


class EtaStop(BaseModel):
    orderId: str
    publicId: str
    sequence: int | None
    status: str
    etaSeconds: int | None
    eta: str | None
    expectedAt: str | None = Field(
        default=None,
        description=(
            "beyond the specification's fields: when the courier is expected to hand over, counting "
            "the service at earlier stops and the waits where the courier arrives before a window "
            "opens (this stop's or an earlier one's); eta and etaSeconds count no waits"
        ),
    )


class Eta(BaseModel):
    courierId: str
    origin: Origin | None
    method: Literal["road", "straight_line"]
    computedAt: str
    stops: list[EtaStop]


def _eta(courier) -> dict[str, Any]:
    return courier_eta(
        runtime().routes,
        courier,
        max_fix_age=timedelta(minutes=runtime().settings.eta_max_fix_minutes),
    )


@endpoint(bp, "GET", "/couriers/<int:courier_id>/eta", guard=D, response=Eta, errors=(404,), tags=TAGS)
def courier_eta_for_dispatcher(courier_id: int):
    """Arrival estimates of a courier's open stops in run order."""
    return _eta(own_courier(current_caller().company_id, courier_id))


@endpoint(bp, "GET", "/courier/eta", guard=C, response=Eta, tags=TAGS)
def my_eta():
    """Arrival estimates of the calling courier's open stops."""
    courier = current_caller().courier()
    if courier is None:
        raise Forbidden("No courier profile in this company.")
    return _eta(courier)
