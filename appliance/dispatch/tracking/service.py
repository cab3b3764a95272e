"""Tracking rules. The public view never shows the recipient's name, phone or address while the
parcel is moving; the courier's position is snapped to a ~110 m grid (so repeated reads cannot be
averaged back to the true point) and shown only while on the way."""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot, by_primary_key
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, NotFound
from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.company.serializers import logo_url
from appliance.dispatch.couriers.lookups import latest_location
from appliance.dispatch.db import database
from appliance.dispatch.eta.service import courier_eta
from appliance.dispatch.models import Company, Courier, Order, OrderEvent, Rating, TrackingLink
from appliance.dispatch.models.messages import RecipientSettings
from appliance.dispatch.orders import codes
from appliance.dispatch.orders.state import audit, late_notice_allowed
from appliance.dispatch.runtime import DispatchRuntime
from appliance.dispatch.tracking import links
from appliance.dispatch.tracking.texts import LATE_TEXTS, render

GRID_DEGREES = 0.001  # about 111 m of latitude; the grid cell is the disclosed precision
STAGE_OF = {
    "draft": "created",
    "ready": "created",
    "assigned": "assigned",
    "picked_up": "picked_up",
    "arrived": "arrived",
    "delivered": "delivered",
    "failed": "failed",
    "cancelled": "cancelled",
}
STATE_OF = {
    "created": "preparing",
    "assigned": "preparing",
    "picked_up": "on_the_way",
    "arrived": "on_the_way",
    "delivered": "delivered",
    "failed": "failed",
    "cancelled": "cancelled",
}
STAGE_ORDER = ["created", "assigned", "picked_up", "arrived", "delivered", "failed", "cancelled"]
NOT_FOUND_DETAIL = "No such tracking link."

# A recipient's page refreshes itself while the parcel moves: the view's queries are compiled.
_LINK_BY_HASH = CompiledSelect(
    lambda: TrackingLink.select().where(TrackingLink.token_hash == Slot("digest")).limit(1)
)
_ORDER = by_primary_key(Order)
_COMPANY = by_primary_key(Company)
_COURIER = by_primary_key(Courier)
_RATING = CompiledSelect(lambda: Rating.select().where(Rating.order == Slot("order_id")).limit(1))
_STATUS_EVENTS = CompiledSelect(
    lambda: (
        OrderEvent.select()
        .where((OrderEvent.order == Slot("order_id")) & (OrderEvent.kind == "status_changed"))
        .order_by(OrderEvent.id)
    )
)


def coarsen(lat: float, lon: float) -> tuple[float, float]:
    """Snap to the centre of a fixed 0.001° grid cell."""
    return (
        round((math.floor(lat / GRID_DEGREES) + 0.5) * GRID_DEGREES, 6),
        round((math.floor(lon / GRID_DEGREES) + 0.5) * GRID_DEGREES, 6),
    )


def line_index(company_id: int, courier_id: int) -> int:
    """A stable colour index 0..7 that does not reveal the courier id."""
    digest = hashlib.sha256(f"line:{company_id}:{courier_id}".encode()).digest()
    return digest[0] % 8


def issue_link(rt: DispatchRuntime, order: Order, ttl_hours: int) -> dict[str, Any]:
    """A new link for the order, ending the ones before (call inside a transaction)."""
    return links.issue(
        rt.master_key, rt.settings.dispatch_public_url, order, ttl_hours, revoke_others=True
    ).answer()


def create_link(
    rt: DispatchRuntime, company_id: int, order_id: int, ttl_hours: int | None, actor_id: int
) -> dict[str, Any]:
    with write_transaction(database):
        order = Order.get_or_none((Order.id == order_id) & (Order.company == company_id))
        if order is None:
            raise NotFound("No such order.")
        link = issue_link(rt, order, ttl_hours or rt.settings.tracking_ttl_hours)
        audit(order, "tracking_link_issued", actor_id, expiresAt=link["expiresAt"])
    return {"token": link["token"], "path": link["path"], "expiresAt": link["expiresAt"]}


def link_in_force(rt: DispatchRuntime, company_id: int, order_id: int) -> dict[str, Any] | None:
    """The order's live link (not revoked, not expired), or None. A link issued before its token
    was kept encrypted (migration 0015) is reported without its address (path and url null)."""
    order = Order.get_or_none((Order.id == order_id) & (Order.company == company_id))
    if order is None:
        raise NotFound("No such order.")
    link = (
        TrackingLink.select()
        .where((TrackingLink.order == order.id) & links.live())
        .order_by(TrackingLink.id.desc())
        .first()
    )
    if link is None:
        return None
    path = f"/t/{links.unseal(rt.master_key, order.id, link.token_cipher)}" if link.token_cipher else None
    return {
        "path": path,
        "url": rt.settings.dispatch_public_url + path if path else None,
        "createdAt": clock.iso(link.created_at),
        "expiresAt": clock.iso(link.expires_at),
    }


def notify_late(
    rt: DispatchRuntime,
    company_id: int,
    order_id: int,
    actor_id: int,
    delay_minutes: int | None,
    language: str,
    ttl_hours: int | None,
) -> dict[str, Any]:
    with write_transaction(database):
        order = Order.get_or_none((Order.id == order_id) & (Order.company == company_id))
        if order is None:
            raise NotFound("No such order.")
        if not late_notice_allowed(order):
            raise Conflict("The order is not on its way.")
        company = Company.get_by_id(company_id)
        minutes = delay_minutes or _estimated_minutes(rt, order) or 15
        link = issue_link(rt, order, ttl_hours or rt.settings.tracking_ttl_hours)
        template = company.sms_template or LATE_TEXTS[language]
        # The link in the text opens the page in the language of the text (issue 46).
        message = render(
            template, company=company.name, minutes=minutes, link=f"{link['url']}?lang={language}"
        )
        audit(order, "late_notified", actor_id, delayMinutes=minutes, language=language)
    return {
        "message": message,
        "recipientPhone": order.recipient_phone,
        "sender": company.sms_sender,
        "trackingLink": link,
    }


def _estimated_minutes(rt: DispatchRuntime, order: Order) -> int | None:
    if not order.courier_id:
        return None
    eta = courier_eta(
        rt.routes,
        Courier.get_by_id(order.courier_id),
        max_fix_age=timedelta(minutes=rt.settings.eta_max_fix_minutes),
    )
    # The expected hand-over (waits for earlier stops' windows counted), as the page shows it.
    expected = next((s["expectedAt"] for s in eta["stops"] if s["orderId"] == str(order.id)), None)
    if expected is None:
        return None
    seconds = (datetime.fromisoformat(expected) - clock.now()).total_seconds()
    return max(1, math.ceil(seconds / 60)) if seconds > 0 else None


def find_link(token: str) -> TrackingLink:
    """The live link of a token; unknown, expired and revoked all raise the same NotFound."""
    digest = token_hash(token)  # always hashed, so every miss costs the same
    link = _LINK_BY_HASH.first(database, digest=digest)
    if link is None or not links.is_live(link.revoked_at, link.expires_at):
        raise NotFound(NOT_FOUND_DETAIL)
    return link


def recipient_language(token: str) -> str | None:
    """The language the order names for its recipient (None when it names none: the page then
    goes by the browser before the company's default)."""
    try:
        link = find_link(token)
    except NotFound:
        return None
    order = Order.get_or_none(Order.id == link.order_id)
    return order.recipient_language if order is not None else None


def _timeline(order: Order) -> list[dict[str, Any]]:
    reached: dict[str, str] = {}
    if order.attempt == 1:
        reached["created"] = clock.iso(order.created_at) or ""
    for event in _STATUS_EVENTS.run(database, order_id=order.id):
        data = json.loads(event.data)
        if (
            event.from_status == "failed"
            and event.to_status == "ready"
            and data.get("attempt") == order.attempt
        ):
            reached = {"created": clock.iso(event.created_at) or ""}
            continue
        if data.get("attempt") != order.attempt:
            continue
        stage = STAGE_OF.get(event.to_status or "")
        if stage and stage not in reached:
            reached[stage] = clock.iso(event.created_at) or ""
    current = STAGE_ORDER.index(STAGE_OF[order.status])
    return [
        {"stage": s, "at": at}
        for s, at in reached.items()
        if STAGE_ORDER.index(s) <= current or s == STAGE_OF[order.status]
    ]


def view(rt: DispatchRuntime, token: str) -> dict[str, Any]:
    """The recipient's view of the link's order: who delivers, where the parcel is (coarsened,
    only while on the way), when it arrives, and the proof and receipt once delivered."""
    link = find_link(token)
    order = _ORDER.first(database, key=link.order_id)
    company = _COMPANY.first(database, key=order.company_id)
    stage = STAGE_OF[order.status]
    state = STATE_OF[stage]
    moving = state == "on_the_way"
    courier_id = order.courier_id or (order.last_courier_id if state in ("delivered", "failed") else None)
    courier = _COURIER.first(database, key=courier_id) if courier_id else None
    rating = _RATING.first(database, order_id=order.id)
    on_the_road = _on_the_road(rt, order, courier, moving) if state in ("preparing", "on_the_way") else {}
    delivered = _delivered(rt, order) if state == "delivered" else {}
    otp = None
    if moving and order.otp_required and order.otp_cipher:
        otp = codes.decrypt_code(rt.master_key, order.public_id, order.otp_cipher)
    return {
        "company": {
            "name": company.name,
            "brandColor": company.brand_color,
            "logoUrl": logo_url(rt, company),
            "supportPhone": company.support_phone,
        },
        "state": state,
        "stage": stage,
        "timeline": _timeline(order),
        "proof": delivered.get("proof"),
        "receipt": delivered.get("receipt"),
        "rating": {"ok": rating.ok, "createdAt": clock.iso(rating.created_at)} if rating else None,
        "failureReason": order.failure_reason if state == "failed" else None,
        "stopsAhead": on_the_road.get("stopsAhead"),
        "otpCode": otp,
        "courierName": courier.display_name.split()[0] if courier and courier.display_name else None,
        "courierLine": line_index(company.id, courier.id) if courier else None,
        "courierPhone": courier.phone if courier and moving and company.show_courier_phone else None,
        "courier": on_the_road.get("courier"),
        "courierUpdatedAt": on_the_road.get("courierUpdatedAt"),
        "destination": {"lat": order.lat, "lon": order.lon},
        "etaSeconds": on_the_road.get("etaSeconds"),
        "route": on_the_road.get("route"),
        "expiresAt": clock.iso(link.expires_at),
        **_window_and_language(order, state, on_the_road.get("expectedAt")),
        "waitSeconds": on_the_road.get("waitSeconds") if state in ("preparing", "on_the_way") else None,
    }


def _window_and_language(order: Order, state: str, expected_at: str | None) -> dict[str, Any]:
    """Issue 46: the language the page opens in (the recipient's: the order's, else the company's
    default for recipients) and, while the parcel is not yet delivered, the delivery window with
    the expected arrival shown against it ("between 11:00 and 14:00, about 12:15"). ``etaSeconds``
    stays the road estimate the specification defines; ``expectedAt`` is the run's expected
    hand-over (eta/service.py ``expected_sequence``): the drive, the service at earlier stops and
    the waits where the courier is early for a window, at this stop (a courier does not deliver
    before its window opens: early is not on time) or an earlier one."""
    language = order.recipient_language
    if language is None:
        settings = RecipientSettings.get_or_none(RecipientSettings.company == order.company_id)
        language = settings.default_language if settings is not None else "hy"
    part: dict[str, Any] = {"language": language, "deliveryWindow": None, "expectedAt": None}
    if state not in ("preparing", "on_the_way"):
        return part
    if order.window_start is not None or order.window_end is not None:
        part["deliveryWindow"] = {"start": clock.iso(order.window_start), "end": clock.iso(order.window_end)}
    part["expectedAt"] = expected_at
    return part


def _on_the_road(rt: DispatchRuntime, order: Order, courier: Courier | None, moving: bool) -> dict[str, Any]:
    """The arrival estimate and the stops before this one while the order is the courier's; the
    courier's coarsened position and the road from it only once the parcel is on its way."""
    if courier is None or not order.courier_id:
        return {}
    eta = courier_eta(rt.routes, courier, max_fix_age=timedelta(minutes=rt.settings.eta_max_fix_minutes))
    stops = eta["stops"]
    part: dict[str, Any] = {}
    mine = next((i for i, s in enumerate(stops) if s["orderId"] == str(order.id)), None)
    if mine is not None:
        part["etaSeconds"] = stops[mine]["etaSeconds"]
        stop = stops[mine]
        part["expectedAt"] = stop["expectedAt"]
        if stop["eta"] is not None and stop["expectedAt"] is not None:
            waited = datetime.fromisoformat(stop["expectedAt"]) - datetime.fromisoformat(stop["eta"])
            part["waitSeconds"] = max(0, round(waited.total_seconds()))
        if any(s["sequence"] is not None for s in stops):
            part["stopsAhead"] = mine
    fix = latest_location(courier.id) if moving else None
    if fix is not None:
        lat, lon = coarsen(fix.lat, fix.lon)
        part["courier"] = {"lat": lat, "lon": lon}
        part["courierUpdatedAt"] = clock.iso(fix.captured_at)
        part["route"] = rt.routes.route([(lat, lon), (order.lat, order.lon)]).geometry
    return part


def _delivered(rt: DispatchRuntime, order: Order) -> dict[str, Any]:
    """The proof (the photo behind a short-lived link, the receiver's first name) and the receipt."""
    photo = None
    if order.proof_photo_key and rt.objects.exists(order.proof_photo_key):
        photo = rt.objects.presign_get(order.proof_photo_key)
    # The recipient's signature (issue 47), like the photo: the tracking link is the recipient's
    # own secret (sent to them alone), so whoever holds it sees both once the order is delivered.
    signature = None
    if order.proof_signature_key and rt.objects.exists(order.proof_signature_key):
        signature = rt.objects.presign_get(order.proof_signature_key)
    paid = order.amount_amd
    if order.is_cod:
        paid = order.collected_amount_amd if order.collected_amount_amd is not None else order.cod_amount_amd
    return {
        "proof": {
            "photoUrl": photo,
            "receivedBy": order.proof_recipient_name.split()[0] if order.proof_recipient_name else None,
            "method": order.proof_method or ("photo" if photo else "name"),
            "signatureUrl": signature,
            "deliveredAt": clock.iso(order.finished_at),
        },
        "receipt": {
            "orderNumber": order.public_id,
            "address": {"hy": order.address_hy, "en": order.address_en, "ru": order.address_ru},
            "payment": {"method": "cash" if order.is_cod else "prepaid", "amountAmd": paid},
            # Issue 47: the fiscal receipt printed on e-HDM (fiscal/): its number and QR text.
            "fiscal": {
                "fiscalNumber": order.fiscal_number,
                "receiptId": order.fiscal_receipt_id,
                "qr": order.fiscal_qr,
            }
            if order.fiscal_state in ("printed", "returned")
            else None,
        },
    }


def rate(token: str, ok: bool, comment: str | None) -> dict[str, Any]:
    with write_transaction(database):
        link = find_link(token)
        order = Order.get_by_id(link.order_id)
        if order.status != "delivered":
            raise Conflict("The order is not delivered yet.")
        try:
            with database.atomic():
                rating = Rating.create(
                    order=order.id, company=order.company_id, ok=ok, comment=comment, created_at=clock.now()
                )
        except peewee.IntegrityError:
            raise Conflict("This delivery was already rated.") from None
        audit(order, "rated", None, ok=ok)
    return {"rating": {"ok": rating.ok, "comment": rating.comment, "createdAt": clock.iso(rating.created_at)}}


def token_hash_for_timing(token: str) -> None:
    """Hash a token that cannot exist, so that a malformed one costs what a lookup costs."""
    _LINK_BY_HASH.first(database, digest=token_hash(token))
