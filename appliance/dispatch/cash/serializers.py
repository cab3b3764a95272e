"""JSON shapes of cash rows (see schemas.py for their OpenAPI models)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.dispatch.models import Collection, Courier, Order, Settlement, User


def covered_body(collection: Collection) -> dict[str, Any]:
    return {
        "orderId": str(collection.order.id),
        "publicId": collection.order.public_id,
        "amountAmd": collection.amount_amd,
        "collectedAt": clock.iso(collection.collected_at),
    }


def collection_body(collection: Collection) -> dict[str, Any]:
    return {**covered_body(collection), "settled": collection.settlement_id is not None}


def settlement_body(row: Settlement) -> dict[str, Any]:
    accepted = User.get_or_none(User.id == row.accepted_by_id) if row.accepted_by_id else None
    courier = Courier.get_or_none(Courier.id == row.courier_id)
    covered = (
        Collection.select(Collection, Order)
        .join(Order)
        .where(Collection.settlement == row.id)
        .order_by(Collection.id)
    )
    return {
        "id": str(row.id),
        "courierId": str(row.courier_id),
        "courierName": courier.display_name if courier else "",
        "status": row.status,
        "expectedAmd": row.expected_amd,
        "receivedAmd": row.received_amd,
        "shortfallAmd": row.shortfall_amd,
        "note": row.note,
        "acceptedByName": accepted.display_name if accepted else None,
        "submittedAt": clock.iso(row.submitted_at),
        "confirmedAt": clock.iso(row.confirmed_at),
        "orders": [covered_body(c) for c in covered],
    }
