"""Recipient messages: the company's settings, an order's messages and the late notice."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import D, O, current_caller
from appliance.dispatch.messages import schemas, service
from appliance.dispatch.runtime import runtime

bp = Blueprint("messages", __name__)
TAGS = ["Recipient messages"]


@endpoint(bp, "GET", "/company/messages", guard=D, response=schemas.MessageSettingsEnvelope, tags=TAGS)
def get_settings():
    """The company's SMS provider, e-mail switch, events that send and templates (no password)."""
    company_id = current_caller().company_id
    body = service.get_settings(company_id)
    return {"settings": service.with_segments(body, company_id, runtime().settings.dispatch_public_url)}


@endpoint(
    bp,
    "PATCH",
    "/company/messages",
    guard=O,
    body=schemas.MessageSettingsPatch,
    response=schemas.MessageSettingsEnvelope,
    errors=(422,),
    error_notes={
        422: "smsEnabled without the whole provider (errors name what is missing), or an smppHost "
        "that does not resolve or resolves to a loopback, private or other non-public address"
    },
    tags=TAGS,
)
def patch_settings(body: schemas.MessageSettingsPatch):
    """Change the settings; smsEnabled needs the whole provider (422 names what is missing), and
    smppHost must resolve to public addresses only (422), unless the deployment allows private
    providers (``smpp_allow_private``)."""
    changes = body.model_dump(include=body.model_fields_set)
    rt = runtime()
    company_id = current_caller().company_id
    allow_private = rt.settings.smpp_allow_private
    return {
        "settings": service.with_segments(
            service.update_settings(rt.master_key, company_id, changes, allow_private=allow_private),
            company_id,
            rt.settings.dispatch_public_url,
        )
    }


@endpoint(
    bp,
    "GET",
    "/orders/<int:order_id>/messages",
    guard=D,
    response=schemas.MessageList,
    errors=(404,),
    tags=TAGS,
)
def order_messages(order_id: int):
    """The order's messages to its recipient and what became of each, oldest first."""
    return {"messages": service.order_messages(current_caller().company_id, order_id)}


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/messages/late/preview",
    guard=D,
    body=schemas.LateNotice,
    body_required=False,
    response=schemas.LatePreview,
    errors=(404,),
    tags=TAGS,
)
def preview_late(order_id: int, body: schemas.LateNotice):
    """The late notice as it would be sent: text, encoding and SMS segments; nothing is sent."""
    return service.preview_late(runtime(), current_caller().company_id, order_id, body.delayMinutes)


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/messages/late",
    guard=D,
    body=schemas.LateNotice,
    body_required=False,
    status=201,
    response=schemas.LateSent,
    errors=(404, 409),
    tags=TAGS,
)
def send_late(order_id: int, body: schemas.LateNotice):
    """Send the late notice to the recipient on every channel set up (409 when none, or when
    the order is not out for delivery)."""
    caller = current_caller()
    return service.send_late(runtime(), caller.company_id, order_id, caller.user.id, body.delayMinutes)
