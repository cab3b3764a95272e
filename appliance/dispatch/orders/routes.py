"""Orders (dispatcher side)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.common.kept import json_response
from appliance.common.objects import StorageUnavailable
from appliance.common.problems import NotFound, Unavailable
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.orders import listing, schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("orders", __name__)
TAGS = ["Orders"]


@endpoint(bp, "GET", "/orders", guard=D, query=schemas.OrderListQuery, response=schemas.OrderList, tags=TAGS)
def list_orders(query: schemas.OrderListQuery):
    """One Yerevan working day (created, due or finished that day, plus open work carried over),
    newest first; without date the latest 200."""
    answer, kept = listing.listing_answer(
        runtime().listings, current_caller().company_id, query.date, query.limit
    )
    return json_response(answer, kept=kept)


@endpoint(
    bp,
    "POST",
    "/orders",
    guard=D,
    body=schemas.OrderCreate,
    status=201,
    response=schemas.OrderEnvelope,
    errors=(422,),
    tags=TAGS,
)
def create_order(body: schemas.OrderCreate):
    """Create a pin-first draft (a delivery code is generated when otpRequired)."""
    caller = current_caller()
    order = service.create_order(caller.company_id, caller.user.id, body.model_dump(), runtime().master_key)
    return {"order": order}


@endpoint(
    bp, "GET", "/orders/<int:order_id>", guard=D, response=schemas.OrderEnvelope, errors=(404,), tags=TAGS
)
def get_order(order_id: int):
    """Order detail."""
    return {"order": service.order_detail(current_caller().company_id, order_id)}


@endpoint(
    bp,
    "PATCH",
    "/orders/<int:order_id>",
    guard=D,
    body=schemas.OrderPatch,
    response=schemas.OrderEnvelope,
    errors=(404, 409, 422),
    tags=TAGS,
)
def patch_order(order_id: int, body: schemas.OrderPatch):
    """Edit a draft or ready order (409 otherwise)."""
    caller = current_caller()
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    if "pin" in changes and changes["pin"] is not None:
        changes["pin"] = body.pin.model_dump() if body.pin else None
    return {
        "order": service.update_order(
            caller.company_id, order_id, caller.user.id, changes, runtime().master_key
        )
    }


@endpoint(
    bp,
    "GET",
    "/orders/<int:order_id>/events",
    guard=D,
    response=schemas.OrderEvents,
    errors=(404,),
    tags=TAGS,
)
def order_events(order_id: int):
    """The immutable audit trail of an order, oldest first."""
    return {"events": service.order_events(current_caller().company_id, order_id)}


@endpoint(
    bp,
    "GET",
    "/orders/<int:order_id>/proof/photo-url",
    guard=D,
    response=schemas.PhotoUrl,
    errors=(404, 503),
    tags=TAGS,
)
def proof_photo_url(order_id: int):
    """A short-lived signed link to the latest proof photo; storage is never public."""
    order = service.own_order(current_caller().company_id, order_id)
    if not order.proof_photo_key:
        raise NotFound("No proof photo.")
    store = runtime().objects
    try:
        if not store.exists(order.proof_photo_key):
            raise NotFound("No proof photo.")
        return {"url": store.presign_get(order.proof_photo_key), "expiresIn": store.lifetime_seconds}
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/status",
    guard=D,
    body=schemas.StatusChange,
    response=schemas.OrderEnvelope,
    errors=(404, 409, 422),
    tags=TAGS,
)
def change_status(order_id: int, body: schemas.StatusChange):
    """Dispatcher moves: draft<->ready, cancel, unassign (assigned->ready), fail, retry (failed->ready)."""
    caller = current_caller()
    return {
        "order": service.change_status(
            caller.company_id, order_id, caller.user.id, body.status, body.reason, runtime().master_key
        )
    }


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/delivery-code/reset",
    guard=D,
    response=schemas.OrderEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def reset_delivery_code(order_id: int):
    """A fresh delivery code and attempt budget (after 423 locked, or a lost code); 409 when the
    order requires no code or is finished. The tracking page shows the new code."""
    caller = current_caller()
    return {
        "order": service.reset_delivery_code(
            caller.company_id, order_id, caller.user.id, runtime().master_key
        )
    }


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/assign",
    guard=D,
    body=schemas.AssignRequest,
    status=201,
    response=schemas.AssignResult,
    errors=(404, 409),
    tags=TAGS,
)
def assign(order_id: int, body: schemas.AssignRequest):
    """Assign a ready order, or reassign an assigned one to another courier."""
    caller = current_caller()
    return service.assign(caller.company_id, order_id, body.courierId, caller.user.id)
