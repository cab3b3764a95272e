"""Orders (dispatcher side)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from appliance.common.api import endpoint
from appliance.common.kept import json_response
from appliance.common.objects import StorageUnavailable
from appliance.common.problems import BadRequest, NotFound, PayloadTooLarge, Unavailable, UnsupportedMediaType
from appliance.dispatch.auth.guards import DK, D, IntegrationCaller, current_actor, current_caller
from appliance.dispatch.geocoding.search import company_geocoder
from appliance.dispatch.orders import bulk as bulk_actions
from appliance.dispatch.orders import (
    handover,
    import_words,
    importing,
    listing,
    on_behalf,
    proof,
    schemas,
    service,
    sheets,
)
from appliance.dispatch.runtime import runtime
from appliance.dispatch.statements import service as statements

bp = Blueprint("orders", __name__)
TAGS = ["Orders"]


@endpoint(bp, "GET", "/orders", guard=DK, query=schemas.OrderListQuery, response=schemas.OrderList, tags=TAGS)
def list_orders(query: schemas.OrderListQuery):
    """One Yerevan working day (created, due or finished that day, plus open work carried over),
    newest first; without date the latest 200; needsPin keeps only the orders that need a pin (true)
    or only the others (false)."""
    needs_pin = None if query.needsPin is None else query.needsPin == "true"
    answer, kept = listing.listing_answer(
        runtime().listings, current_actor().company_id, query.date, query.limit, needs_pin
    )
    return json_response(answer, kept=kept)


@endpoint(
    bp,
    "POST",
    "/orders",
    guard=DK,
    body=schemas.OrderCreate,
    status=201,
    response=schemas.OrderEnvelope,
    errors=(409, 422),
    error_notes={409: "code external_ref_taken: the company already has an order with this externalRef"},
    tags=TAGS,
)
def create_order(body: schemas.OrderCreate):
    """Create a pin-first draft (a delivery code is generated when otpRequired). An integration key's
    order arrives ready instead when its company opted in (PATCH /company/order-settings)."""
    caller = current_actor()
    ready = isinstance(caller, IntegrationCaller) and caller.company.integration_orders_ready
    key_id = caller.key_id if isinstance(caller, IntegrationCaller) else None
    rt = runtime()
    order = service.create_order(
        caller.company_id,
        caller.actor_id,
        body.model_dump(),
        rt.master_key,
        ready=ready,
        router=rt.router,
        shop_key_id=key_id,
    )
    return {"order": order}


@endpoint(
    bp,
    "POST",
    "/orders/import",
    guard=DK,
    query=schemas.ImportQuery,
    response=schemas.ImportResult,
    errors=(400, 413, 415, 422),
    error_notes={
        422: "shopId names no integration key of the company",
        400: "the file cannot be read: not CSV UTF-8 or .xlsx, a formula, unknown or missing columns",
        413: f"over {sheets.MAX_BYTES // (1024 * 1024)} MB or {sheets.MAX_ROWS:,} rows; a workbook that "
        "unpacks to over 100 MB, declares a larger sheet than an import reads, or needs more memory or "
        "time to read than an import may take",
        415: "neither text/csv nor multipart/form-data",
    },
    tags=TAGS,
)
def import_orders(query: schemas.ImportQuery):
    """Import a day's orders from CSV (text/csv) or .xlsx (multipart/form-data field file).

    Each row goes through the same checks as POST /orders and is created whole or refused; rows
    whose externalRef exists are counted as existing, never created twice. dryRun=true answers
    the same counts and creates nothing. Columns and formats: docs/orders.md."""
    caller = current_actor()
    data = _uploaded_file()
    rt = runtime()
    result = importing.import_file(
        caller.company_id,
        caller.actor_id,
        data,
        rt.master_key,
        dry_run=query.dryRun,
        geocode=company_geocoder(rt.settings.data_dir, caller.company_id),
        ready=(query.status or caller.company.import_status) == "ready",
        router=rt.router,
        shop_key_id=caller.key_id
        if isinstance(caller, IntegrationCaller)
        else statements.shop_of(caller.company_id, query.shopId),
    )
    # The problems in the reader's language (Accept-Language), each naming the file's own header.
    return import_words.localise(result, import_words.request_language(request.accept_languages))


def _uploaded_file() -> bytes:
    """The bytes of the file: the body of a text/csv request, or the multipart field ``file``."""
    limit = sheets.MAX_BYTES + 64 * 1024  # the app's limit is for JSON bodies: an upload has its own
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"The file is larger than {sheets.MAX_BYTES // (1024 * 1024)} MB: split it.")
    request.max_content_length = limit
    if request.mimetype in ("text/csv", "application/csv", "text/plain"):
        data = request.get_data(cache=False)
    elif request.mimetype == "multipart/form-data":
        upload = request.files.get("file")
        if upload is None:
            raise BadRequest(
                "Send the file in the multipart field 'file'.",
                errors=[{"field": "file", "message": "required"}],
            )
        data = upload.read(limit + 1)
    else:
        raise UnsupportedMediaType(
            "Send the file as text/csv, or as multipart/form-data in the field 'file'."
        )
    if not data.strip():
        raise BadRequest("The file is empty.", errors=[{"field": "file", "message": "empty"}])
    return data


# The import's request body is a file, which endpoint() (JSON bodies) does not describe: the
# document names both ways to send it (added by document_uploads, app.py).
UPLOAD_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("/orders/import", "post"): {
        "required": True,
        "content": {
            "text/csv": {"schema": {"type": "string", "description": "CSV UTF-8; header row first"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": ".xlsx or CSV UTF-8"}
                    },
                },
                "encoding": {"file": {"contentType": "application/octet-stream"}},
            },
        },
    }
}


def document_uploads(document: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with the request body of every upload route."""
    for (path, method), body in UPLOAD_BODIES.items():
        operation = document["paths"].get(path, {}).get(method)
        if operation is not None:
            operation["requestBody"] = body
    return document


@endpoint(
    bp, "GET", "/orders/<int:order_id>", guard=DK, response=schemas.OrderEnvelope, errors=(404,), tags=TAGS
)
def get_order(order_id: int):
    """Order detail."""
    return {"order": service.order_detail(current_actor().company_id, order_id)}


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
    """Edit a draft or ready order (409 otherwise, or external_ref_taken)."""
    caller = current_caller()
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    if "pin" in changes and changes["pin"] is not None:
        changes["pin"] = body.pin.model_dump() if body.pin else None
    if changes.get("addressDetails") is not None and body.addressDetails is not None:
        changes["addressDetails"] = body.addressDetails.model_dump()
    return {
        "order": service.update_order(
            caller.company_id,
            order_id,
            caller.user.id,
            changes,
            runtime().master_key,
            router=runtime().router,
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
    "GET",
    "/orders/<int:order_id>/proof",
    guard=DK,
    response=schemas.ProofRecord,
    errors=(404, 503),
    error_notes={404: "no such order (for an integration key: not one it sent), or not finished yet"},
    tags=TAGS,
)
def order_proof(order_id: int):
    """Beyond the specification (issue 47): the proof of a delivered or failed order, for the
    dispatcher and for the shop through the integration key that sent the order: the kinds
    recorded, and the photo and signature behind short-lived links (docs/orders.md)."""
    caller = current_actor()
    key_id = caller.key_id if isinstance(caller, IntegrationCaller) else None
    return proof.proof_of(runtime().objects, caller.company_id, order_id, key_id)


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
    "/orders/<int:order_id>/deliver-for-courier",
    guard=D,
    body=schemas.DeliverForCourier,
    response=schemas.OrderEnvelope,
    errors=(404, 409, 422),
    tags=TAGS,
)
def deliver_for_courier(order_id: int, body: schemas.DeliverForCourier):
    """Record a picked-up or arrived order delivered on the courier's behalf, with the delivery code
    or the recipient's name (422 with neither, or a wrong code); audited as the dispatcher's act."""
    caller = current_caller()
    proof = body.model_dump(exclude_none=True)
    return {
        "order": on_behalf.deliver_for_courier(
            caller.company_id, order_id, caller.user.id, proof, runtime().master_key
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


@endpoint(
    bp,
    "POST",
    "/orders/bulk",
    guard=D,
    body=schemas.BulkRequest,
    response=schemas.BulkResult,
    errors=(409, 422),
    tags=TAGS,
)
def bulk(body: schemas.BulkRequest):
    """Make ready, assign (each after the courier's last stop, in the order given), cancel with a
    reason, or move to another Yerevan day (the windows' times kept; the whole day without one)
    many orders at once. Each order's change is its own transaction with its own result (`ok`, or
    the Problem a single call would have answered); 200 even when some failed. With an
    `Idempotency-Key` header (8 to 128 characters) the answer is kept: the same key and body replay
    it, another body under the key is 409 `idempotency_key_reused`, and 409 `in_progress` while the
    first call still runs (docs/orders.md, *Bulk actions*)."""
    caller = current_caller()
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 8 <= len(key) <= 128:
        raise BadRequest(
            "Idempotency-Key must be 8 to 128 characters.",
            errors=[{"field": "Idempotency-Key", "message": "8 to 128 characters"}],
        )
    return bulk_actions.run(caller.company_id, caller.user.id, body.model_dump(), key, runtime().master_key)


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/reassign",
    guard=D,
    body=schemas.AssignRequest,
    response=schemas.OrderEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def reassign(order_id: int, body: schemas.AssignRequest):
    """Hand a picked-up or arrived order to another active courier (a phone died, a scooter broke):
    it keeps its status, goes to the end of the new courier's run, and its history names both
    couriers; the new courier's app shows who handed it over. 404 unknown order or inactive courier;
    409 not picked up or arrived, or already with that courier."""
    caller = current_caller()
    return {"order": handover.reassign(caller.company_id, order_id, body.courierId, caller.user.id)}
