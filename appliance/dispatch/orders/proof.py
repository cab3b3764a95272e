"""Proof requirements (issue 47): what a delivery must carry, and the check the courier's delivery
runs before its move (docs/orders.md, *Proof of delivery*).

Kinds: ``photo`` (photoKey), ``signature`` (signatureKey: the recipient's signature drawn on the
courier's screen, a PNG uploaded like a photo), ``code`` (the order's delivery code, otpCode),
``scan`` (scannedCode: the parcel's barcode or QR, which must read the order's externalRef, or its
publicId), ``name`` (recipientName) and ``age`` (ageChecked true: the courier saw the recipient's
age proven).

A set rests as the kind names in KINDS' order joined by commas ("" none). The order's own set
wins; NULL there means the company's. An integration key's set is copied onto the orders the key
creates that name none, so changing a key later leaves its earlier orders as they were.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from appliance.common import clock
from appliance.common.objects import IMAGE_TYPES, StorageUnavailable
from appliance.common.problems import BadRequest, Invalid, NotFound, Unavailable
from appliance.dispatch.models import Company, Order
from appliance.dispatch.orders import ids

KINDS = ("photo", "signature", "code", "scan", "name", "age")
# The body field of the courier's delivery that carries each kind (errors[].field of a 422).
FIELDS = {
    "photo": "photoKey",
    "signature": "signatureKey",
    "code": "otpCode",
    "scan": "scannedCode",
    "name": "recipientName",
    "age": "ageChecked",
}


def stored(kinds: Iterable[str] | None) -> str | None:
    """The canonical text of a set of kinds (None stays None: not set at this level)."""
    if kinds is None:
        return None
    given = set(kinds)
    unknown = sorted(given - set(KINDS))
    if unknown:
        raise BadRequest(
            f"Unknown proof kinds: {', '.join(unknown)}.",
            errors=[{"field": "proofRequired", "message": "photo, signature, code, scan, name or age"}],
        )
    return ",".join(k for k in KINDS if k in given)


def kinds_of(text: str | None) -> list[str]:
    return [k for k in (text or "").split(",") if k in KINDS]


def required(order: Order, company: Company | None = None) -> list[str]:
    """The kinds ``order``'s delivery needs: its own set, else its company's."""
    if order.proof_required is not None:
        return kinds_of(order.proof_required)
    company = company or Company.get_by_id(order.company_id)
    return kinds_of(company.proof_required)


def scan_matches(order: Order, value: str) -> bool:
    """The scanned value names this order: its externalRef exactly (the shop's label) or its
    publicId (the company's own label), either ignoring surrounding spaces and the publicId's case."""
    value = value.strip()
    if order.external_ref and value == order.external_ref.strip():
        return True
    return value.upper() == order.public_id.upper()


def missing(order: Order, body: dict[str, Any], needed: list[str]) -> list[str]:
    """The needed kinds ``body`` (a courier's delivered move) does not carry. The code counts as
    carried when sent: whether it is right is the delivery code's own check, which follows."""
    carried = {
        "photo": bool(body.get("photoKey")),
        "signature": bool(body.get("signatureKey")),
        "code": bool(order.otp_required and body.get("otpCode")),
        "scan": bool(body.get("scannedCode")),
        "name": bool((body.get("recipientName") or "").strip()),
        "age": body.get("ageChecked") is True,
    }
    return [k for k in needed if not carried[k]]


def recorded(order: Order) -> list[str]:
    """The kinds of proof ``order``'s finished attempt carries (its history names them)."""
    has = {
        "photo": bool(order.proof_photo_key),
        "signature": bool(order.proof_signature_key),
        "code": order.status == "delivered" and bool(order.otp_required),
        "scan": bool(order.proof_scanned_code),
        "name": bool(order.proof_recipient_name),
        "age": bool(order.proof_age_checked),
    }
    return [k for k in KINDS if has[k]]


def check_delivery(order: Order, body: dict[str, Any]) -> None:
    """Refuse (422) a delivered move that lacks a proof the order needs, or whose scan reads
    another parcel. Runs before the move, inside its transaction, and before the delivery code's
    check, so a refused move spends no code attempt."""
    needed = required(order)
    if not order.otp_required:
        # An order's own set with code always has a code (creation and PATCH turn it on); the
        # company's set gives new orders one. An order made before the company asked for codes has
        # none to give: it is not held to a code nobody can tell the courier.
        needed = [k for k in needed if k != "code"]
    absent = missing(order, body, needed)
    if absent:
        raise Invalid(
            f"The delivery needs more proof: {', '.join(absent)}.",
            code="proof_missing",
            errors=[{"field": FIELDS[k], "message": "required"} for k in absent],
        )
    scanned = body.get("scannedCode")
    if scanned and not scan_matches(order, scanned):
        raise Invalid(
            "The scanned code is not this order's.",
            errors=[{"field": "scannedCode", "message": "another parcel's code"}],
        )


def is_issued_key(objects: Any, company_id: int, order_id: int, kind: str, key: str) -> bool:
    """A key the app was issued for this order's ``kind`` (photo: proofs/, signature:
    signatures/; one segment of hex and an image extension, so no ``..`` or other path) to which
    something was uploaded."""
    folder = "signatures" if kind == "signature" else "proofs"
    prefix = f"{company_id}/{folder}/{order_id}/"
    name = key[len(prefix) :] if key.startswith(prefix) else ""
    stem, _, extension = name.partition(".")
    allowed = ("png",) if kind == "signature" else tuple(IMAGE_TYPES.values())
    if len(stem) != 32 or not all(c in "0123456789abcdef" for c in stem) or extension not in allowed:
        return False
    try:
        return bool(objects.exists(key))
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None


def _link(objects: Any, key: str | None) -> dict[str, Any] | None:
    if not key or not objects.exists(key):
        return None
    return {"url": objects.presign_get(key), "expiresIn": objects.lifetime_seconds}


def proof_of(objects: Any, company_id: int, order_id: int, key_id: int | None) -> dict[str, Any]:
    """GET /orders/{id}/proof: what the delivery (or failed attempt) recorded, the photo and the
    signature behind short-lived links. An integration key reads only the orders it sent: any
    other order, like another company's, is 404."""
    ids.require(order_id, "order")
    scope = (Order.id == order_id) & (Order.company == company_id)
    if key_id is not None:
        scope &= Order.shop_key_id == key_id
    order = Order.select().where(scope).first()
    if order is None:
        raise NotFound("No such order.")
    if order.status not in ("delivered", "failed"):
        raise NotFound("The order has no proof yet: it is not delivered.")
    try:
        photo, signature = _link(objects, order.proof_photo_key), _link(objects, order.proof_signature_key)
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None
    return {
        "orderId": str(order.id),
        "publicId": order.public_id,
        "externalRef": order.external_ref,
        "status": order.status,
        "finishedAt": clock.iso(order.finished_at),
        "required": required(order),
        "recipientName": order.proof_recipient_name,
        "notes": order.proof_notes,
        "method": order.proof_method,
        "codeChecked": order.status == "delivered" and bool(order.otp_required),
        "scannedCode": order.proof_scanned_code,
        "ageChecked": bool(order.proof_age_checked),
        "photo": photo,
        "signature": signature,
    }
