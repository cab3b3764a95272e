"""Public tracking (/track/{token}, rating, the page at /t/{token}) and the dispatcher's tracking
links and late notices."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from flask import Blueprint, Response, request
from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import Schema, endpoint
from appliance.common.kept import json_response
from appliance.common.problems import NotFound
from appliance.common.ratelimit import public_limit
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.pages.responses import page_asset, rendered_page_response
from appliance.dispatch.runtime import runtime
from appliance.dispatch.tracking import page, service
from appliance.dispatch.tracking.kept import kept_view
from appliance.dispatch.tracking.receipt_qr import svg as receipt_qr_svg

bp = Blueprint("tracking", __name__)

# Unknown, expired and revoked tokens answer these exact bytes (no request id in the body).
NOT_FOUND_BODY = json.dumps(
    {
        "type": "about:blank#not-found",
        "title": "Not Found",
        "status": 404,
        "detail": service.NOT_FOUND_DETAIL,
    },
    separators=(",", ":"),
)


def _not_found() -> Response:
    return Response(NOT_FOUND_BODY, status=404, mimetype="application/problem+json")


def _valid_token(token: str) -> bool:
    return 20 <= len(token) <= 200


class TrackingRequest(Schema):
    ttlHours: Annotated[int, Field(ge=1, le=720)] | None = Field(
        default=None, description="hours the link lives; the tracking_ttl_hours setting when absent"
    )


class TrackingLinkOut(BaseModel):
    token: str = Field(description="shown once")
    path: str
    expiresAt: str


class TrackingLinkFull(TrackingLinkOut):
    url: str = Field(description="the public URL of the tracking page")


class NotifyLateOut(BaseModel):
    message: str = Field(description="the text to send, in the chosen language (or the company's template)")
    recipientPhone: str
    sender: str | None = Field(description="the company's SMS sender name (smsSender), for the SMS gateway")
    trackingLink: TrackingLinkFull


class NotifyLateRequest(Schema):
    delayMinutes: Annotated[int, Field(ge=1, le=600)] | None = None
    language: Literal["hy", "ru", "en"] = "hy"
    ttlHours: Annotated[int, Field(ge=1, le=720)] | None = Field(
        default=None, description="hours the link lives; the tracking_ttl_hours setting when absent"
    )


class RatingRequest(Schema):
    ok: bool
    comment: Annotated[str, StringConstraints(max_length=1000)] | None = None


class LatLonOut(BaseModel):
    lat: float
    lon: float


class TrackingView(BaseModel):
    company: dict[str, Any]
    state: Literal["preparing", "on_the_way", "delivered", "failed", "cancelled"]
    stage: Literal["created", "assigned", "picked_up", "arrived", "delivered", "failed", "cancelled"]
    timeline: list[dict[str, str]]
    proof: dict[str, Any] | None
    receipt: dict[str, Any] | None
    rating: dict[str, Any] | None
    failureReason: Literal["recipient_absent", "refused", "wrong_address", "other"] | None
    stopsAhead: int | None
    otpCode: str | None
    courierName: str | None
    courierLine: Annotated[int, Field(ge=0, le=7)] | None
    courierPhone: str | None
    courier: LatLonOut | None = Field(description="coarsened to a 0.001° grid (about 110 m)")
    courierUpdatedAt: str | None
    destination: LatLonOut
    etaSeconds: int | None
    route: str | None = Field(
        description="polyline, precision 6, from the coarsened courier point to the pin"
    )
    expiresAt: str
    language: Literal["hy", "ru", "en"] = Field(
        description="the recipient's language (the order's, else the company's default for recipients): "
        "the page opens in it unless ?lang= or the visitor's own earlier choice says otherwise"
    )
    deliveryWindow: dict[str, str | None] | None = Field(
        description="{start, end} of the delivery window while the parcel is not delivered; null without one"
    )
    expectedAt: str | None = Field(
        description="the expected hand-over as a clock time: the road estimate plus the waits where the "
        "courier is early for a window (an earlier stop's, and never before this order's own window "
        "opens); the page shows 'between 11:00 and 14:00, about 12:15'"
    )
    waitSeconds: int | None = Field(
        default=None,
        description="seconds expectedAt lies beyond the road estimate (etaSeconds): the waits for windows; "
        "without a window the page shows etaSeconds plus these as minutes",
    )


class LinkInForce(BaseModel):
    path: str | None = Field(description="/t/<token>; null for a link issued before tokens were kept")
    url: str | None
    createdAt: str
    expiresAt: str


class LinkInForceOut(BaseModel):
    link: LinkInForce | None = Field(description="the order's live tracking link, null when none")


@endpoint(
    bp,
    "GET",
    "/orders/<int:order_id>/tracking",
    guard=D,
    response=LinkInForceOut,
    errors=(404,),
    tags=["Tracking"],
)
def tracking_link_in_force(order_id: int):
    """The link the recipient holds now (issues nothing, ends nothing)."""
    return {"link": service.link_in_force(runtime(), current_caller().company_id, order_id)}


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/tracking",
    guard=D,
    body=TrackingRequest,
    body_required=False,
    status=201,
    response=TrackingLinkOut,
    errors=(404,),
    tags=["Tracking"],
)
def create_tracking_link(order_id: int, body: TrackingRequest):
    """Issue a tracking link (revokes the previous one); the token is returned once."""
    caller = current_caller()
    return service.create_link(runtime(), caller.company_id, order_id, body.ttlHours, caller.user.id)


@endpoint(
    bp,
    "POST",
    "/orders/<int:order_id>/notify-late",
    guard=D,
    body=NotifyLateRequest,
    body_required=False,
    status=201,
    response=NotifyLateOut,
    errors=(404, 409),
    tags=["Tracking"],
)
def notify_late(order_id: int, body: NotifyLateRequest):
    """The late-delivery text with a fresh tracking link; nothing is sent."""
    caller = current_caller()
    return service.notify_late(
        runtime(),
        caller.company_id,
        order_id,
        caller.user.id,
        body.delayMinutes,
        body.language,
        body.ttlHours,
    )


@endpoint(bp, "GET", "/track/<token>", response=TrackingView, errors=(404, 429), tags=["Tracking"])
@public_limit
def track(token: str):
    """The recipient's view of a delivery."""
    if not _valid_token(token):
        service.token_hash_for_timing(token)
        return _not_found()
    rt = runtime()
    try:
        answer, kept = kept_view(rt, token_hash(token), lambda: service.view(rt, token))
    except NotFound:
        return _not_found()
    return json_response(answer, kept=kept)


@endpoint(
    bp,
    "POST",
    "/track/<token>/rating",
    body=RatingRequest,
    status=201,
    errors=(404, 409, 429),
    tags=["Tracking"],
)
@public_limit
def rate(token: str, body: RatingRequest):
    """Rate a delivered order once."""
    if not _valid_token(token):
        return _not_found()
    try:
        return service.rate(token, body.ok, body.comment)
    except NotFound:
        return _not_found()


@bp.route("/track/<token>/receipt-qr.svg", methods=["GET"])
@public_limit
def receipt_qr(token: str) -> Response:
    """The printed fiscal receipt's QR as an SVG image (issue 47); 404 as for a missing link when
    the link's order has no printed receipt."""
    if not _valid_token(token):
        service.token_hash_for_timing(token)
        return _not_found()
    try:
        image = receipt_qr_svg(token)
    except NotFound:
        return _not_found()
    response = Response(image, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "private, no-store"
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


@bp.route("/t/<token>", methods=["GET"])
@public_limit
def tracking_page(token: str) -> Response:
    """The page with its view written in (stage and arrival estimate at first paint); a link that
    is unknown, expired or revoked gets the page saying so. Never indexed, never kept."""
    view = None
    if _valid_token(token):
        rt = runtime()
        try:
            answer, _kept = kept_view(rt, token_hash(token), lambda: service.view(rt, token))
            view = json.loads(answer.body)
        except NotFound:
            view = None
    else:
        service.token_hash_for_timing(token)
    lang = page.language(
        request.args.get("lang"),
        request.cookies.get(page.COOKIE),
        service.recipient_language(token) if view else None,
        list(request.accept_languages.values()),
        view.get("language") if view else None,  # the order's, else the company's default
    )
    template = page_asset("track.html").body
    response = rendered_page_response(page.render(template, view, lang), template)
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    response.vary.update(("Accept-Language", "Cookie"))  # the language is chosen from them
    return response
