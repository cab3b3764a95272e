"""The courier app's endpoints (couriers only)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.common.problems import Forbidden
from appliance.dispatch.auth.guards import C, current_caller
from appliance.dispatch.cash import service as cash_service
from appliance.dispatch.cash.schemas import CashSummary, SettlementEnvelope
from appliance.dispatch.courier_app import schemas, service
from appliance.dispatch.couriers import schemas as courier_schemas
from appliance.dispatch.couriers.lookups import latest_location
from appliance.dispatch.couriers.serializers import location_body
from appliance.dispatch.couriers.service import earnings, end_shift, start_shift, toggle_break
from appliance.dispatch.models import Courier
from appliance.dispatch.orders.schemas import OrderEnvelope
from appliance.dispatch.runtime import runtime

bp = Blueprint("courier_app", __name__)
TAGS = ["Courier app"]


def me() -> Courier:
    courier = current_caller().courier()
    if courier is None:
        raise Forbidden("No courier profile in this company.")
    return courier


@endpoint(
    bp,
    "POST",
    "/courier/location",
    guard=C,
    body=schemas.LocationBatch,
    status=202,
    response=schemas.LocationAccepted,
    tags=TAGS,
)
def post_location(body: schemas.LocationBatch):
    """1..50 GPS points; resending a batch is safe (deduplicated by capturedAt)."""
    return service.record_locations(me(), [p.model_dump() for p in body.points])


@endpoint(bp, "GET", "/courier/location/current", guard=C, response=schemas.LocationCurrent, tags=TAGS)
def current_location():
    """The newest location received."""
    return {"location": location_body(latest_location(me().id))}


@endpoint(bp, "GET", "/courier/me", guard=C, response=schemas.CourierMe, tags=TAGS)
def get_me():
    """Profile, current shift and latest location, and the number to call the dispatcher on."""
    return service.profile(me())


@endpoint(
    bp,
    "PATCH",
    "/courier/me",
    guard=C,
    body=schemas.SelfProfilePatch,
    response=courier_schemas.CourierEnvelope,
    tags=TAGS,
)
def patch_me(body: schemas.SelfProfilePatch):
    """Edit the own profile (400 for no changes or an unknown language)."""
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    return {"courier": service.update_own_profile(me(), changes)}


@endpoint(
    bp,
    "POST",
    "/courier/shift/start",
    guard=C,
    status=201,
    response=schemas.ShiftEnvelope,
    errors=(409,),
    tags=TAGS,
)
def shift_start():
    """Open a shift (409 when one is open); the courier goes online."""
    return {"shift": start_shift(me())}


@endpoint(
    bp, "POST", "/courier/shift/break", guard=C, response=schemas.ShiftEnvelope, errors=(409,), tags=TAGS
)
def shift_break():
    """Toggle a break (409 when no shift is open)."""
    return {"shift": toggle_break(me())}


@endpoint(bp, "POST", "/courier/shift/end", guard=C, response=schemas.ShiftEnvelope, errors=(409,), tags=TAGS)
def shift_end():
    """End the open shift (409 when none); the courier goes offline."""
    return {"shift": end_shift(me(), None)}


@endpoint(bp, "GET", "/courier/orders", guard=C, response=schemas.CourierOrders, tags=TAGS)
def my_orders():
    """The courier's orders in assigned, picked_up or arrived, in run order; an assigned stop
    planned for a later day is listed once that day has come (docs/courier-app.md)."""
    return {"orders": service.my_orders(me())}


@endpoint(
    bp,
    "POST",
    "/courier/orders/<int:order_id>/status",
    guard=C,
    body=schemas.CourierStatusChange,
    response=schemas.StatusResult,
    errors=(404, 409, 422, 423),
    tags=TAGS,
)
def change_status(order_id: int, body: schemas.CourierStatusChange):
    """picked_up, arrived, delivered (with the code when required) or failed (with a reason)."""
    return service.change_status(runtime(), me(), order_id, body.model_dump(exclude_none=True))


@endpoint(
    bp,
    "POST",
    "/courier/orders/<int:order_id>/attention",
    guard=C,
    body=schemas.AttentionReport,
    response=OrderEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def report_refused(order_id: int, body: schemas.AttentionReport):
    """A queued move the server refused: the order is flagged needsAttention for the dispatcher
    (with the cash held) until it moves on (409 when it already has)."""
    return {"order": service.report_refused(me(), order_id, body.model_dump())}


@endpoint(
    bp,
    "POST",
    "/courier/orders/<int:order_id>/otp/verify",
    guard=C,
    body=schemas.OtpVerify,
    response=schemas.OtpResult,
    errors=(404, 422, 423),
    tags=TAGS,
)
def verify_otp(order_id: int, body: schemas.OtpVerify):
    """Check a delivery code (shares the attempt budget with the delivered transition)."""
    return service.verify_code(runtime(), me(), order_id, body.code)


@endpoint(
    bp,
    "POST",
    "/courier/orders/<int:order_id>/proof/upload-url",
    guard=C,
    body=schemas.ProofUploadRequest,
    response=schemas.UploadUrl,
    errors=(404, 413, 415, 503),
    tags=TAGS,
)
def proof_upload_url(order_id: int, body: schemas.ProofUploadRequest):
    """A presigned PUT for a proof photo, bound to its content type (and size when given); send
    exactly that Content-Type; pass the key back as photoKey (signatureKey for kind signature)."""
    return service.proof_upload_url(
        runtime(), me(), order_id, body.contentType, body.contentLength, body.kind
    )


@endpoint(
    bp,
    "POST",
    "/courier/orders/pick-up",
    guard=C,
    body=schemas.PickUpRequest,
    response=schemas.PickUpResult,
    errors=(400,),
    tags=TAGS,
)
def pick_up(body: schemas.PickUpRequest):
    """Beyond the specification (issue 47): pick up many orders at the depot in one request, named
    by id or by the code scanned off each parcel. Each order's move is its own transition, with the
    answer a single POST /courier/orders/{id}/status would give (200 even when some were refused)."""
    return service.pick_up(runtime(), me(), body.model_dump(exclude_none=True))


@endpoint(bp, "GET", "/courier/cash", guard=C, response=CashSummary, tags=TAGS)
def cash():
    """Outstanding amount, any open settlement and recent collections."""
    return cash_service.cash_summary(me())


@endpoint(
    bp,
    "POST",
    "/courier/cash/settle",
    guard=C,
    status=201,
    response=SettlementEnvelope,
    errors=(400, 409),
    tags=TAGS,
)
def settle():
    """Hand over the outstanding cash (400 nothing outstanding, 409 one already awaits)."""
    return {"settlement": cash_service.settle(me())}


@endpoint(bp, "GET", "/courier/earnings", guard=C, response=courier_schemas.EarningsOut, tags=TAGS)
def my_earnings():
    """Delivered counts and amounts today, this week and all time (Asia/Yerevan)."""
    return earnings(me().id)


@endpoint(
    bp, "GET", "/courier/history", guard=C, query=schemas.HistoryQuery, response=schemas.History, tags=TAGS
)
def my_history(query: schemas.HistoryQuery):
    """Every delivered or failed attempt, newest first."""
    return {"history": service.history(me(), query.limit)}
