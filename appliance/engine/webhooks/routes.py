"""GET and POST /v1/webhooks/subscriptions (signed)."""

from __future__ import annotations

from flask import Blueprint

from appliance.engine.auth.signature import current_operator, signed_endpoint
from appliance.engine.runtime import runtime
from appliance.engine.webhooks import schemas, service

bp = Blueprint("webhooks", __name__)


@signed_endpoint(
    bp,
    "POST",
    "/v1/webhooks/subscriptions",
    body=schemas.SubscribeRequest,
    status=201,
    response=schemas.Subscribed,
    tags=["Webhooks"],
    response_description="201 with the secret for a new endpoint; 200 when the URL was subscribed before "
    "(re-activated, types added, no secret)",
)
def subscribe(body: schemas.SubscribeRequest):
    """Deliver the chosen event types (every type when none is listed) to an https endpoint."""
    rt = runtime()
    result, created = service.subscribe(
        rt.master_key,
        rt.settings.webhook_allow_private,
        current_operator(),
        body.endpointUrl,
        [str(t) for t in body.eventTypes or []],
    )
    return result, 201 if created else 200


@signed_endpoint(
    bp,
    "GET",
    "/v1/webhooks/subscriptions",
    response=schemas.Subscriptions,
    tags=["Webhooks"],
)
def list_subscriptions():
    """The caller's active subscriptions (a disabled endpoint's are not listed)."""
    return service.active_subscriptions(current_operator())
