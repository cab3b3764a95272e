"""An order's fiscal receipt as its serializers show it (a leaf: the order's serializer imports it)."""

from __future__ import annotations

from typing import Any


def receipt_of(d: dict[str, Any]) -> dict[str, Any] | None:
    """From a model's ``__data__`` or a listing's row: the state (queued, printed, returning,
    returned), the receipt's id, fiscal number and QR text; None when no receipt was queued."""
    state = d.get("fiscal_state")
    if not state:
        return None
    return {
        "state": state,
        "receiptId": d.get("fiscal_receipt_id"),
        "fiscalNumber": d.get("fiscal_number"),
        "qr": d.get("fiscal_qr"),
    }
