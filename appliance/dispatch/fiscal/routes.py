"""Fiscal receipts: the company's e-HDM settings (owner), an order's receipts, its return and a
person's decision on a receipt whose printing is unknown."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.common.problems import Invalid
from appliance.dispatch.auth.guards import D, O, current_caller
from appliance.dispatch.fiscal import schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("fiscal", __name__)
TAGS = ["Fiscal receipts"]


@endpoint(bp, "GET", "/company/fiscal", guard=O, response=schemas.FiscalSettingsEnvelope, tags=TAGS)
def get_settings():
    """The company's e-HDM settings (null when never set); the private key is never answered."""
    return {"settings": service.get_settings(current_caller().company_id)}


@endpoint(
    bp,
    "PUT",
    "/company/fiscal",
    guard=O,
    body=schemas.FiscalSettingsIn,
    response=schemas.FiscalSettingsEnvelope,
    errors=(422,),
    error_notes={
        422: "a certificate or key that does not parse, a key not the certificate's, no key at the "
        "first save, or a baseUrl that is not https or does not resolve to public addresses"
    },
    tags=TAGS,
)
def put_settings(body: schemas.FiscalSettingsIn):
    """Set the company's e-HDM credentials and receipt defaults; the key is sealed at rest."""
    rt = runtime()
    fields = body.model_dump()
    return {
        "settings": service.put_settings(
            rt.master_key, current_caller().company_id, fields, allow_private=rt.settings.ehdm_allow_private
        )
    }


@endpoint(
    bp,
    "POST",
    "/company/fiscal/check",
    guard=O,
    response=schemas.SetupCall,
    errors=(404, 502),
    tags=TAGS,
)
def check():
    """e-HDM's checkConnection with the company's credentials (502: refused or unreachable)."""
    rt = runtime()
    return service.setup_call(
        rt.master_key, current_caller().company_id, "check", allow_private=rt.settings.ehdm_allow_private
    )


@endpoint(
    bp,
    "POST",
    "/company/fiscal/activate",
    guard=O,
    response=schemas.SetupCall,
    errors=(404, 502),
    tags=TAGS,
)
def activate():
    """e-HDM's activate, then configureDepartments with the company's department and tax regime."""
    rt = runtime()
    return service.setup_call(
        rt.master_key, current_caller().company_id, "activate", allow_private=rt.settings.ehdm_allow_private
    )


@endpoint(
    bp,
    "GET",
    "/company/fiscal/goods",
    guard=O,
    query=schemas.GoodsQuery,
    response=schemas.GoodsLists,
    errors=(404, 502),
    tags=TAGS,
)
def goods(query: schemas.GoodsQuery):
    """e-HDM's getGoodList: the goods lists registered for a tax regime and TIN (their codes and
    prices), to choose the classification codes of the receipts' lines."""
    rt = runtime()
    return service.good_lists(
        rt.master_key,
        current_caller().company_id,
        int(query.taxRegime),
        query.tin,
        allow_private=rt.settings.ehdm_allow_private,
    )


@endpoint(
    bp,
    "GET",
    "/orders/<int:order_id>/fiscal-receipts",
    guard=D,
    response=schemas.ReceiptList,
    errors=(404,),
    tags=TAGS,
)
def order_receipts(order_id: int):
    """The order's fiscal receipts (its sale and its return), with their state and last error."""
    return {"receipts": service.order_receipts(current_caller().company_id, order_id)}


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/fiscal-receipts/return",
    guard=D,
    response=schemas.ReceiptOut,
    status=202,
    errors=(404, 409),
    tags=TAGS,
)
def request_return(order_id: int):
    """The delivered cash order came back and its cash was given back: queue its return receipt
    (printed once, from the sale's receipt; 409 while the sale's is not printed or the return was
    asked for already)."""
    caller = current_caller()
    return service.request_return(caller.company_id, order_id, caller.user.id)


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/fiscal-receipts/decision",
    guard=D,
    body=schemas.Decision,
    response=schemas.ReceiptOut,
    errors=(404, 409, 422, 502),
    tags=TAGS,
)
def decide(order_id: int, body: schemas.Decision):
    """A person's decision on a receipt flagged unknown or failed: ``printed`` with the receiptId
    found on e-HDM (looked up with printCopy, its total checked), or ``not_printed`` (queued again)."""
    if body.outcome == "printed" and not body.receiptId:
        raise Invalid(
            "receiptId is required when the receipt was printed.",
            errors=[{"field": "receiptId", "message": "required"}],
        )
    rt = runtime()
    caller = current_caller()
    return service.decide(
        rt.master_key,
        caller.company_id,
        order_id,
        caller.user.id,
        body.model_dump(),
        allow_private=rt.settings.ehdm_allow_private,
    )
