"""Integration keys (owners) and webhook endpoints (owners and the company's keys)."""

from __future__ import annotations

from flask import Blueprint, Response

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import OK, O, current_actor, current_caller
from appliance.dispatch.integrations import schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("integrations", __name__)
TAGS = ["Integrations"]


@endpoint(
    bp,
    "POST",
    "/company/integration-keys",
    guard=O,
    body=schemas.KeyCreate,
    status=201,
    response=schemas.KeyCreated,
    tags=TAGS,
)
def create_key(body: schemas.KeyCreate):
    """A new integration key for a shop: the key is in this answer only (it rests as a hash)."""
    caller = current_caller()
    return service.create_key(caller.company_id, caller.user.id, body.name, body.proofRequired)


@endpoint(
    bp,
    "PATCH",
    "/company/integration-keys/<int:key_id>",
    guard=O,
    body=schemas.KeyPatch,
    response=schemas.KeyOut,
    errors=(404,),
    tags=TAGS,
)
def patch_key(key_id: int, body: schemas.KeyPatch):
    """Beyond the specification (issue 47): the proof the key's new orders need by default."""
    return service.update_key(current_caller().company_id, key_id, body.proofRequired)


@endpoint(bp, "GET", "/company/integration-keys", guard=O, response=schemas.KeyList, tags=TAGS)
def list_keys():
    """The company's keys, without the keys themselves."""
    return {"keys": service.list_keys(current_caller().company_id)}


@endpoint(
    bp, "DELETE", "/company/integration-keys/<int:key_id>", guard=O, status=204, errors=(404,), tags=TAGS
)
def revoke_key(key_id: int):
    """Revoke a key: its next request is refused (401)."""
    service.revoke_key(current_caller().company_id, key_id)
    return Response(status=204)


@endpoint(
    bp,
    "POST",
    "/company/webhooks",
    guard=OK,
    body=schemas.WebhookCreate,
    status=201,
    response=schemas.WebhookCreated,
    errors=(400, 422),
    error_notes={
        422: "no events, or more than the six there are",
        400: "the URL is refused: not https, credentials in it, or a host that does not resolve or "
        "resolves to a non-public address (the answer does not say which, nor the address)",
    },
    tags=TAGS,
)
def create_webhook(body: schemas.WebhookCreate):
    """Send the chosen order events to an https receiver, signed as Standard Webhooks with the
    secret in this answer (shown only here)."""
    rt = runtime()
    return service.create_webhook(
        rt.master_key,
        rt.settings.webhook_allow_private,
        current_actor().company_id,
        body.url,
        [str(e) for e in body.events],
    )


@endpoint(bp, "GET", "/company/webhooks", guard=OK, response=schemas.WebhookList, tags=TAGS)
def list_webhooks():
    """The company's webhook endpoints (never their secrets)."""
    return {"webhooks": service.list_webhooks(current_actor().company_id)}


@endpoint(bp, "DELETE", "/company/webhooks/<int:webhook_id>", guard=OK, status=204, errors=(404,), tags=TAGS)
def delete_webhook(webhook_id: int):
    """Stop sending to an endpoint; its queued deliveries are given up."""
    service.delete_webhook(current_actor().company_id, webhook_id)
    return Response(status=204)


@endpoint(
    bp,
    "GET",
    "/company/webhooks/<int:webhook_id>/deliveries",
    guard=O,
    response=schemas.DeliveryList,
    errors=(404,),
    error_notes={404: "an unknown, deleted or another company's endpoint"},
    tags=TAGS,
)
def list_deliveries(webhook_id: int):
    """An endpoint's newest deliveries first, with their attempts and last error (owners; beyond
    the specification, for the console)."""
    return {"deliveries": service.list_deliveries(current_caller().company_id, webhook_id)}


@endpoint(
    bp,
    "POST",
    "/company/webhooks/<int:webhook_id>/deliveries/<int:delivery_id>/resend",
    guard=O,
    response=schemas.DeliveryOut,
    errors=(404, 409),
    error_notes={
        404: "an unknown delivery, or an unknown, deleted or another company's endpoint",
        409: "the delivery was delivered",
    },
    tags=TAGS,
)
def resend_delivery(webhook_id: int, delivery_id: int):
    """Queue a given-up delivery again, due at once (a queued one is left as it is: the same
    answer). Owners; beyond the specification, for the console."""
    return service.resend_delivery(current_caller().company_id, webhook_id, delivery_id)
