"""Company settings, logo, depots and billing (Company, team, billing table)."""

from __future__ import annotations

from flask import Blueprint, Response, stream_with_context

from appliance.common.api import endpoint
from appliance.dispatch import audit
from appliance.dispatch.auth.guards import B, D, O, current_caller
from appliance.dispatch.company import schemas, service
from appliance.dispatch.reports import writers
from appliance.dispatch.runtime import runtime

bp = Blueprint("company", __name__)
TAGS = ["Company"]


@endpoint(bp, "GET", "/company", guard=D, response=schemas.CompanyEnvelope, tags=TAGS)
def get_company():
    """The active company's settings."""
    return {"company": service.get_company(runtime(), current_caller().company_id)}


@endpoint(
    bp,
    "PATCH",
    "/company",
    guard=O,
    body=schemas.CompanyPatch,
    response=schemas.CompanyEnvelope,
    errors=(422,),
    tags=TAGS,
)
def patch_company(body: schemas.CompanyPatch):
    """Change settings; setting logoUrl clears an uploaded logo and the reverse."""
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    return {"company": service.update_company(runtime(), current_caller().company_id, changes)}


@endpoint(
    bp,
    "POST",
    "/company/logo/upload-url",
    guard=O,
    body=schemas.LogoUploadRequest,
    response=schemas.PresignedUpload,
    errors=(415, 503),
    tags=TAGS,
)
def logo_upload_url(body: schemas.LogoUploadRequest):
    """A presigned PUT URL for a jpeg, png or webp logo; pass the key back as logoKey."""
    return service.logo_upload_url(runtime(), current_caller().company_id, body.contentType)


@endpoint(bp, "GET", "/company/depots", guard=B, response=schemas.DepotList, tags=TAGS)
def list_depots():
    """The company's depots, default first."""
    return {"depots": service.list_depots(current_caller().company_id)}


@endpoint(
    bp,
    "POST",
    "/company/depots",
    guard=O,
    body=schemas.DepotCreate,
    status=201,
    response=schemas.DepotEnvelope,
    errors=(422,),
    tags=TAGS,
)
def create_depot(body: schemas.DepotCreate):
    """Add a depot; the first one, or one with isDefault, becomes the default."""
    depot = service.create_depot(
        current_caller().company_id, body.name, body.address, body.point.model_dump(), body.isDefault
    )
    return {"depot": depot}


@endpoint(
    bp,
    "PATCH",
    "/company/depots/<int:depot_id>",
    guard=O,
    body=schemas.DepotPatch,
    response=schemas.DepotEnvelope,
    errors=(404, 422),
    tags=TAGS,
)
def patch_depot(depot_id: int, body: schemas.DepotPatch):
    """Edit a depot; isDefault accepts only true."""
    changes = body.model_dump(exclude_unset=True)
    return {"depot": service.update_depot(current_caller().company_id, depot_id, changes)}


@endpoint(bp, "DELETE", "/company/depots/<int:depot_id>", guard=O, status=204, errors=(404,), tags=TAGS)
def delete_depot(depot_id: int):
    """Remove a depot; removing the default promotes the oldest remaining one."""
    service.delete_depot(current_caller().company_id, depot_id)
    return Response(status=204)


@endpoint(bp, "GET", "/company/billing", guard=O, response=schemas.BillingEnvelope, tags=TAGS)
def get_billing():
    """Plan, limits (not enforced yet), usage, trial and the plan table."""
    return {"billing": service.billing(current_caller().company_id)}


@endpoint(
    bp,
    "PATCH",
    "/company/plan",
    guard=O,
    body=schemas.PlanChange,
    response=schemas.BillingEnvelope,
    tags=TAGS,
)
def change_plan(body: schemas.PlanChange):
    """Change the plan; no payment is taken."""
    return {"billing": service.change_plan(current_caller().company_id, body.plan)}


@endpoint(bp, "GET", "/company/order-settings", guard=D, response=schemas.OrderSettings, tags=TAGS)
def get_order_settings():
    """What new orders arrive as: imported ones (ready by default: each has its pin and phone) and
    those a shop creates with the company's key (drafts, as the specification's POST /orders,
    unless the company opts in). Beyond the specification (docs/orders.md)."""
    return service.order_settings(current_caller().company_id)


@endpoint(
    bp,
    "PATCH",
    "/company/order-settings",
    guard=O,
    body=schemas.OrderSettingsPatch,
    response=schemas.OrderSettings,
    tags=TAGS,
)
def patch_order_settings(body: schemas.OrderSettingsPatch):
    """Change what new orders arrive as (owners)."""
    changes = {name: getattr(body, name) for name in body.model_fields_set if getattr(body, name) is not None}
    return service.update_order_settings(current_caller().company_id, changes)


@endpoint(
    bp, "GET", "/company/audit", guard=O, query=schemas.AuditQuery, response=schemas.AuditPage, tags=TAGS
)
def get_audit(query: schemas.AuditQuery):
    """The company's audit log, oldest first, a page at a time (owners): who changed members,
    roles, settings, depots, keys and webhooks, who exported reports and who recorded a delivery on
    a courier's behalf. Beyond the specification (docs/operations.md, Audit log)."""
    entries = audit.entries(current_caller().company_id, after_id=int(query.after), limit=query.limit)
    return {"entries": entries, "next": entries[-1]["id"] if len(entries) == query.limit else None}


@endpoint(
    bp,
    "GET",
    "/company/audit.csv",
    guard=O,
    tags=TAGS,
    response_content_type="text/csv",
    response_description="text/csv (UTF-8 with a byte-order mark), streamed, oldest first: id, at, "
    "actor_kind, actor, action, subject, before, after, origin, hash",
)
def get_audit_csv():
    """The company's whole audit log as CSV (owners)."""
    company_id = current_caller().company_id
    return Response(
        stream_with_context(writers.csv_chunks(audit.CSV_COLUMNS, audit.csv_rows(company_id))),
        mimetype="text/csv",
        headers={"Content-Disposition": 'attachment; filename="audit.csv"', "Cache-Control": "no-store"},
    )
