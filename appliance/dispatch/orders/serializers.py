"""JSON shapes of orders and assignments (their OpenAPI models are in schemas.py): rows in, what a
client reads out."""

from __future__ import annotations

import json
from typing import Any

from appliance.common import clock
from appliance.dispatch.fiscal.wire import receipt_of
from appliance.dispatch.models import Assignment, Courier, Order
from appliance.dispatch.orders.codes import MAX_ATTEMPTS
from appliance.dispatch.orders.proof import kinds_of
from appliance.dispatch.orders.statuses import ALLOWED_MOVES


def _without_ready(moves: dict[str, Any]) -> dict[str, Any]:
    """A draft that needs a pin cannot be made ready (nor planned) until it has one."""
    return {**moves, "status": [m for m in moves["status"] if m != "ready"]}


def order_body(order: Order | dict[str, Any], courier_names: dict[int, str] | None = None) -> dict[str, Any]:
    """The order record a client needs; takes a model or a row from ``.dicts()`` (listing)."""
    d: dict[str, Any] = order.__data__ if isinstance(order, Order) else order
    status = d["status"]
    finished = status in ("delivered", "failed")
    proof = None
    if finished:
        proof = {
            "recipientName": d.get("proof_recipient_name"),
            "hasPhoto": bool(d.get("proof_photo_key")),
            "notes": d.get("proof_notes"),
            "method": d.get("proof_method"),
            "hasSignature": bool(d.get("proof_signature_key")),
            "scannedCode": d.get("proof_scanned_code"),
            "ageChecked": d.get("proof_age_checked"),
        }
    courier_id = d.get("courier")
    iso = clock.wire
    body: dict[str, Any] = {
        "id": str(d["id"]),
        "publicId": d["public_id"],
        "status": status,
        "allowedMoves": _without_ready(ALLOWED_MOVES[status])
        if d.get("pin_needed")
        else ALLOWED_MOVES[status],
        "recipientName": d["recipient_name"],
        "recipientPhone": d["recipient_phone"],
        "amountAmd": d.get("amount_amd", 0),
        "otpRequired": bool(d.get("otp_required")),
        # Wrong codes spent the budget: the courier's app gets 423 until a dispatcher resets the code.
        "deliveryCodeLocked": bool(d.get("otp_required")) and (d.get("otp_attempts") or 0) >= MAX_ATTEMPTS,
        "isCod": bool(d.get("is_cod")),
        "codAmountAmd": d.get("cod_amount_amd", 0),
        "weightKg": d.get("weight_kg"),
        "deliveryWindowStart": iso(d.get("window_start")),
        "deliveryWindowEnd": iso(d.get("window_end")),
        "addressLabelHy": d["address_hy"],
        "addressLabelEn": d.get("address_en"),
        "addressLabelRu": d.get("address_ru"),
        "pin": {"lat": d["lat"], "lon": d["lon"]},
        "courierId": str(courier_id) if courier_id else None,
        "sequence": d.get("sequence"),
        "attempt": d.get("attempt", 1),
        "failureReason": d.get("failure_reason"),
        "proof": proof,
        "collectedAmountAmd": d.get("collected_amount_amd"),
        "externalRef": d.get("external_ref"),
        "addressDetails": address_details(d),
        "noteToCourier": d.get("note_to_courier"),
        "recipientLanguage": d.get("recipient_language"),
        "recipientEmail": d.get("recipient_email"),
        "needsAttention": attention(d),
        # Beyond the specification (docs/orders.md): why an imported draft waits for its pin.
        "needsPin": d.get("pin_needed"),
        "proofRequired": None if d.get("proof_required") is None else kinds_of(d["proof_required"]),
        # Issue 47 (docs/fees.md): the fee charged to the shop, and the shop (integration key).
        "deliveryFeeAmd": d.get("delivery_fee_amd"),
        "shopId": str(d["shop_key_id"]) if d.get("shop_key_id") else None,
        "items": json.loads(d["fiscal_items"]) if d.get("fiscal_items") else None,
        "partnerTin": d.get("partner_tin"),
        "fiscalReceipt": receipt_of(d),
        "createdAt": iso(d["created_at"]),
        "updatedAt": iso(d["updated_at"]),
        "finishedAt": iso(d.get("finished_at")),
    }
    last_courier = d.get("last_courier")
    if finished and last_courier:
        names = courier_names or {}
        name = names.get(last_courier)
        if name is None:
            courier = Courier.get_or_none(Courier.id == last_courier)
            name = courier.display_name if courier else ""
        body["lastAttempt"] = {
            "courierId": str(last_courier),
            "courierName": name,
            "collectedAmountAmd": d.get("collected_amount_amd"),
        }
    handed = d.get("handed_over_from")
    if handed and status in ("picked_up", "arrived"):
        names = courier_names or {}
        name = names.get(handed)
        if name is None:
            giver = Courier.get_or_none(Courier.id == handed)
            name = giver.display_name if giver else ""
        body["handedOverFrom"] = {"courierId": str(handed), "courierName": name}
    else:
        body["handedOverFrom"] = None
    return body


def attention(d: dict[str, Any]) -> dict[str, Any] | None:
    """A queued move of the courier's app that the server refused (POST
    /courier/orders/{id}/attention), until the order moves on; None otherwise."""
    if not d.get("attention_at"):
        return None
    return {
        "reason": d.get("attention_reason") or "",
        "move": d.get("attention_move"),
        "heldAmountAmd": d.get("attention_held_amd"),
        "at": clock.wire(d.get("attention_at")),
    }


DOOR_PARTS = {
    "entrance": "address_entrance",
    "floor": "address_floor",
    "apartment": "address_apartment",
    "intercom": "address_intercom",
}


def address_details(d: dict[str, Any]) -> dict[str, str | None] | None:
    """{entrance, floor, apartment, intercom}, or None when the order has none of them."""
    parts = {name: d.get(column) for name, column in DOOR_PARTS.items()}
    return parts if any(parts.values()) else None


def assignment_body(row: Assignment) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "orderId": str(row.order_id),
        "courierId": str(row.courier_id),
        "sequence": row.sequence,
        "status": row.status,
        "createdAt": clock.iso(row.created_at),
    }
