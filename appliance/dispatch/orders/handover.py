"""Handing a picked-up or arrived order to another courier (a phone dies, a scooter breaks): POST
/orders/{id}/reassign. The parcel changes hands, the order keeps its status and attempt, and its
next stop is the new courier's last."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, NotFound
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.integrations.outbox import announce
from appliance.dispatch.models import Assignment, Courier
from appliance.dispatch.orders import ids
from appliance.dispatch.orders.serializers import order_body
from appliance.dispatch.orders.service import next_sequence, own_order
from appliance.dispatch.orders.state import ON_THE_WAY, audit, cancel_assignment


def reassign(company_id: int, order_id: int, courier_id: int, actor_id: int | None) -> dict[str, Any]:
    """Move a picked-up or arrived order to another active courier of the company (one
    transaction): the assignment moves, the order goes to the end of the new courier's run, the
    audit trail names both couriers. Nothing is collected before delivery, so no cash moves; a proof
    photo already uploaded stays on the order."""
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        ids.require(courier_id, "courier")
        target = Courier.get_or_none((Courier.id == courier_id) & (Courier.company == company_id))
        if target is None or not target.active:
            raise NotFound("No such active courier.")
        if order.status not in ON_THE_WAY or not order.courier_id:
            raise Conflict(
                f"Only a picked-up or arrived order can be handed over; this one is {order.status}."
            )
        if order.courier_id == courier_id:
            raise Conflict("The order is already with this courier.")
        source = Courier.get_by_id(order.courier_id)
        cancel_assignment(order, actor_id)
        sequence = next_sequence(courier_id, besides=order.id)
        order.courier = courier_id
        order.sequence = sequence
        order.handed_over_from = source.id
        order.updated_at = clock.now()  # type: ignore[assignment]
        order.save()
        row = Assignment.create(
            order=order.id, courier=courier_id, sequence=sequence, status="active", created_at=clock.now()
        )
        audit(
            order,
            "handed_over",
            actor_id,
            fromCourierId=str(source.id),
            fromCourierName=source.display_name,
            courierId=str(courier_id),
            courierName=target.display_name,
            sequence=sequence,
        )
        announce(order, "order.assigned")
        record_event(
            company_id,
            "assignment.created",
            {
                "orderId": str(order.id),
                "courierId": str(courier_id),
                "sequence": sequence,
                "assignmentId": str(row.id),
                "handedOverFrom": str(source.id),
            },
        )
        return order_body(order)
