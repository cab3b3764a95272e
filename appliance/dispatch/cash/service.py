"""Cash on delivery: collections a courier records on delivery, the courier's balance, handovers
(settlements) and the dispatcher's confirmation. The courier app and the couriers list call these;
nothing here calls them back."""

from __future__ import annotations

import datetime as dt
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import lock_row, locked, write_transaction
from appliance.common.problems import BadRequest, Conflict, Invalid, NotFound
from appliance.dispatch.cash.serializers import collection_body, settlement_body
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.models import Collection, Courier, Order, Settlement
from appliance.dispatch.orders import ids

RECENT_COLLECTIONS = 50
SETTLEMENTS_LISTED = 500

# -- the courier's balance -------------------------------------------------------------------------


def carried_shortfall(courier_id: int) -> int:
    latest = (
        Settlement.select()
        .where((Settlement.courier == courier_id) & (Settlement.status == "confirmed"))
        .order_by(Settlement.confirmed_at.desc(), Settlement.id.desc())
        .first()
    )
    return latest.shortfall_amd or 0 if latest else 0


def unsettled_total(courier_id: int) -> int:
    total = (
        Collection.select(peewee.fn.COALESCE(peewee.fn.SUM(Collection.amount_amd), 0))
        .where((Collection.courier == courier_id) & Collection.settlement.is_null())
        .scalar()
    )
    return int(total or 0)


def outstanding(courier_id: int) -> int:
    """Cash the courier holds for the company: unsettled collections plus a carried shortfall.
    While a settlement awaits confirmation, its amount is still outstanding."""
    awaiting = Settlement.get_or_none((Settlement.courier == courier_id) & (Settlement.status == "submitted"))
    if awaiting is not None:
        return awaiting.expected_amd + unsettled_total(courier_id)
    return unsettled_total(courier_id) + carried_shortfall(courier_id)


# -- collections -----------------------------------------------------------------------------------


def record_collection(courier: Courier, order: Order, amount: int, at: dt.datetime | None = None) -> None:
    """The cash a courier took on delivery (``at``: when, if not now); called inside the
    delivery's transaction."""
    Collection.create(
        company=courier.company_id,
        courier=courier.id,
        order=order.id,
        amount_amd=amount,
        collected_at=at or clock.now(),
    )


def cash_summary(courier: Courier) -> dict[str, Any]:
    awaiting = Settlement.get_or_none((Settlement.courier == courier.id) & (Settlement.status == "submitted"))
    recent = (
        Collection.select(Collection, Order)
        .join(Order)
        .where(Collection.courier == courier.id)
        .order_by(Collection.id.desc())
        .limit(RECENT_COLLECTIONS)
    )
    unrecorded = (
        Order.select(peewee.fn.COALESCE(peewee.fn.SUM(Order.attention_held_amd), 0))
        .where((Order.courier == courier.id) & Order.attention_at.is_null(False))
        .scalar()
    )
    return {
        "outstandingAmd": outstanding(courier.id),
        "openSettlement": settlement_body(awaiting) if awaiting else None,
        "unrecordedAmd": int(unrecorded or 0),
        "recentCollections": [collection_body(c) for c in recent],
    }


# -- settlements -----------------------------------------------------------------------------------


def list_settlements(company_id: int, status: str) -> list[dict[str, Any]]:
    """The company's settlements in ``status``, newest first."""
    rows = (
        Settlement.select()
        .where((Settlement.company == company_id) & (Settlement.status == status))
        .order_by(Settlement.id.desc())
        .limit(SETTLEMENTS_LISTED)
    )
    return [settlement_body(r) for r in rows]


def settle(courier: Courier) -> dict[str, Any]:
    with write_transaction(database):
        # One handover of a courier at a time: a second one waits here and then sees the first.
        lock_row(Courier, courier.id)
        if Settlement.get_or_none((Settlement.courier == courier.id) & (Settlement.status == "submitted")):
            raise Conflict("A handover already awaits confirmation.")
        # The handover covers exactly the collections read (and locked) here, so a delivery
        # committed meanwhile is neither counted without being covered nor covered uncounted.
        pending = list(
            locked(
                Collection.select(Collection.id, Collection.amount_amd).where(
                    (Collection.courier == courier.id) & Collection.settlement.is_null()
                )
            )
        )
        amount = sum(c.amount_amd for c in pending) + carried_shortfall(courier.id)
        if amount <= 0:
            raise BadRequest("Nothing to settle.")
        try:
            with database.atomic():
                row = Settlement.create(
                    company=courier.company_id,
                    courier=courier.id,
                    status="submitted",
                    expected_amd=amount,
                    submitted_at=clock.now(),
                    awaiting=1,
                )
        except peewee.IntegrityError:
            raise Conflict("A handover already awaits confirmation.") from None
        if pending:
            Collection.update(settlement=row.id).where(Collection.id.in_([c.id for c in pending])).execute()
        record_event(
            courier.company_id,
            "cash.settlement_submitted",
            {"settlementId": str(row.id), "courierId": str(courier.id), "expectedAmd": amount},
        )
        return settlement_body(row)


def _check_received(expected: int, received: int, note: str | None) -> None:
    if received > expected:
        raise Invalid(
            "receivedAmd is more than the submitted amount.",
            errors=[{"field": "receivedAmd", "message": "above the submitted amount"}],
        )
    if received < expected and not (note or "").strip():
        raise Invalid(
            "A note is required when the handover is short.",
            errors=[{"field": "note", "message": "required"}],
        )


def confirm(
    company_id: int, settlement_id: int, actor_id: int, received: int | None, note: str | None
) -> dict[str, Any]:
    ids.require(settlement_id, "settlement")
    with write_transaction(database):
        row = locked(
            Settlement.select().where((Settlement.id == settlement_id) & (Settlement.company == company_id))
        ).first()
        if row is None:
            raise NotFound("No such settlement.")
        if row.status != "submitted":
            raise Conflict("This settlement is not awaiting confirmation.")
        received = row.expected_amd if received is None else received
        _check_received(row.expected_amd, received, note)
        updated = (
            Settlement.update(
                status="confirmed",
                received_amd=received,
                shortfall_amd=row.expected_amd - received,
                note=note,
                confirmed_at=clock.now(),
                accepted_by=actor_id,
                awaiting=None,
            )
            .where((Settlement.id == row.id) & (Settlement.status == "submitted"))
            .execute()
        )
        if updated != 1:
            raise Conflict("This settlement is not awaiting confirmation.")
        row = Settlement.get_by_id(row.id)
        record_event(
            company_id,
            "cash.settlement_confirmed",
            {
                "settlementId": str(row.id),
                "courierId": str(row.courier_id),
                "receivedAmd": received,
                "shortfallAmd": row.shortfall_amd,
            },
        )
        return {"settlement": settlement_body(row), "courierOutstandingAmd": outstanding(row.courier_id)}
