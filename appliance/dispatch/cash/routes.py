"""Cash settlements (dispatcher side)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.cash.schemas import ConfirmRequest, ConfirmResult, SettlementList, SettlementQuery
from appliance.dispatch.courier_app.service import confirm, settlement_body
from appliance.dispatch.models import Settlement

bp = Blueprint("cash", __name__)
TAGS = ["Cash"]


@endpoint(bp, "GET", "/cash/settlements", guard=D, query=SettlementQuery, response=SettlementList, tags=TAGS)
def list_settlements(query: SettlementQuery):
    """Settlements awaiting confirmation (default) or confirmed ones, newest first."""
    rows = (
        Settlement.select()
        .where((Settlement.company == current_caller().company_id) & (Settlement.status == query.status))
        .order_by(Settlement.id.desc())
        .limit(500)
    )
    return {"settlements": [settlement_body(r) for r in rows]}


@endpoint(
    bp,
    "POST",
    "/cash/settlements/<int:settlement_id>/confirm",
    guard=D,
    body=ConfirmRequest,
    body_required=False,
    response=ConfirmResult,
    errors=(404, 409, 422),
    validation_status=400,
    tags=TAGS,
)
def confirm_settlement(settlement_id: int, body: ConfirmRequest):
    """Confirm a handover; a short one needs a note and the shortfall stays on the courier."""
    caller = current_caller()
    return confirm(caller.company_id, settlement_id, caller.user.id, body.receivedAmd, body.note)
