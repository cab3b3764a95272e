"""Cash settlements (dispatcher side)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.cash import service
from appliance.dispatch.cash.schemas import ConfirmRequest, ConfirmResult, SettlementList, SettlementQuery

bp = Blueprint("cash", __name__)
TAGS = ["Cash"]


@endpoint(bp, "GET", "/cash/settlements", guard=D, query=SettlementQuery, response=SettlementList, tags=TAGS)
def list_settlements(query: SettlementQuery):
    """Settlements awaiting confirmation (default) or confirmed ones, newest first."""
    return {"settlements": service.list_settlements(current_caller().company_id, query.status)}


@endpoint(
    bp,
    "POST",
    "/cash/settlements/<int:settlement_id>/confirm",
    guard=D,
    body=ConfirmRequest,
    body_required=False,
    response=ConfirmResult,
    errors=(404, 409, 422),
    tags=TAGS,
)
def confirm_settlement(settlement_id: int, body: ConfirmRequest):
    """Confirm a handover; a short one needs a note and the shortfall stays on the courier."""
    caller = current_caller()
    return service.confirm(caller.company_id, settlement_id, caller.user.id, body.receivedAmd, body.note)
