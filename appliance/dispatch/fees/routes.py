"""/company/fee-zones: the delivery fee zones, for dispatchers and owners (docs/fees.md)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.fees import schemas, service

bp = Blueprint("fees", __name__)
TAGS = ["Delivery fees"]


@endpoint(bp, "GET", "/company/fee-zones", guard=D, response=schemas.FeeZoneList, tags=TAGS)
def list_zones():
    """The company's fee zones, first drawn first (where zones overlap, the first drawn applies)."""
    return {"zones": service.list_zones(current_caller().company_id)}


@endpoint(
    bp,
    "POST",
    "/company/fee-zones",
    guard=D,
    body=schemas.FeeZoneCreate,
    status=201,
    response=schemas.FeeZoneEnvelope,
    errors=(422,),
    error_notes={422: "a polygon whose edges cross, with no area or a repeated vertex; over 100 zones"},
    tags=TAGS,
)
def create_zone(body: schemas.FeeZoneCreate):
    """Draw a zone and its fee rules (audited)."""
    fields = body.model_dump()
    return {"zone": service.create_zone(current_caller().company_id, fields)}


@endpoint(
    bp,
    "GET",
    "/company/fee-zones/<int:zone_id>",
    guard=D,
    response=schemas.FeeZoneEnvelope,
    errors=(404,),
    tags=TAGS,
)
def get_zone(zone_id: int):
    """One fee zone."""
    return {"zone": service.get_zone(current_caller().company_id, zone_id)}


@endpoint(
    bp,
    "PATCH",
    "/company/fee-zones/<int:zone_id>",
    guard=D,
    body=schemas.FeeZonePatch,
    response=schemas.FeeZoneEnvelope,
    errors=(404, 422),
    tags=TAGS,
)
def update_zone(zone_id: int, body: schemas.FeeZonePatch):
    """Change a zone's name, polygon or rules (audited); orders keep the fee they were given."""
    changes = body.model_dump(exclude_unset=True)
    return {"zone": service.update_zone(current_caller().company_id, zone_id, changes)}


@endpoint(bp, "DELETE", "/company/fee-zones/<int:zone_id>", guard=D, status=204, errors=(404,), tags=TAGS)
def delete_zone(zone_id: int):
    """Remove a zone (audited); orders keep the fee they were given."""
    service.delete_zone(current_caller().company_id, zone_id)
    return "", 204
