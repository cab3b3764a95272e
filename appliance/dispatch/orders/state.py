"""The order state machine. Every status change of every order, by a dispatcher or a courier,
goes through ``transition``: it checks the table of legal moves and writes the immutable audit
event and the realtime event in the caller's transaction."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from appliance.common import clock
from appliance.common.compiled import insert_new
from appliance.common.problems import Conflict
from appliance.dispatch.events.store import record_event
from appliance.dispatch.integrations.outbox import ANNOUNCED_STATUSES, announce
from appliance.dispatch.messages import outbox
from appliance.dispatch.models import Assignment, Order, OrderEvent
from appliance.dispatch.orders.statuses import (  # noqa: F401  (re-exported: the one place)
    ACTIVE,
    ALLOWED_MOVES,
    ASSIGNABLE,
    COURIER_MOVES,
    DISPATCHER_MOVES,
    FINAL,
    ON_BEHALF_MOVES,
    ON_THE_WAY,
    Status,
    late_notice_allowed,
    needs_code_to_deliver,
)


def audit(
    order: Order,
    kind: str,
    actor_id: int | None,
    *,
    from_status: str | None = None,
    to_status: str | None = None,
    at: dt.datetime | None = None,
    **data: Any,
) -> None:
    """One event of the order's history, at ``at`` (when it happened; now by default)."""
    # INSERT text built once (an import writes thousands of these).
    event = OrderEvent(
        order=order.id,
        company=order.company_id,
        kind=kind,
        from_status=from_status,
        to_status=to_status,
        actor=actor_id,
        courier_id=order.courier_id or (order.last_courier_id if to_status in FINAL else None),
        data=json.dumps(data, separators=(",", ":"), default=str),
        created_at=at or clock.now(),
    )
    insert_new(event)


def order_payload(order: Order) -> dict[str, Any]:
    return {
        "orderId": str(order.id),
        "publicId": order.public_id,
        "status": order.status,
        "courierId": str(order.courier_id) if order.courier_id else None,
        "sequence": order.sequence,
    }


def cancel_assignment(order: Order, actor_id: int | None) -> None:
    active = Assignment.get_or_none((Assignment.order == order.id) & (Assignment.status == "active"))
    if active is None:
        return
    Assignment.update(status="cancelled", cancelled_at=clock.now()).where(
        Assignment.id == active.id
    ).execute()
    audit(order, "unassigned", actor_id, courierId=str(active.courier_id))
    record_event(
        order.company_id,
        "assignment.cancelled",
        {"orderId": str(order.id), "courierId": str(active.courier_id), "assignmentId": str(active.id)},
    )


def transition(
    order: Order,
    to: str,
    actor_id: int | None,
    *,
    by: str,
    reason: str | None = None,
    at: dt.datetime | None = None,
    **data: Any,
) -> None:
    """Move ``order`` to ``to`` as ``by`` (dispatcher, courier, on_behalf: a dispatcher for the
    courier, or assignment); 409 when illegal. ``at``: when the move happened, if not now (a
    courier's move queued offline, courier_app/moments.py): the history and ``finished_at`` keep
    it; ``updated_at`` stays the server's (what changed since a client last read)."""
    table = {"dispatcher": DISPATCHER_MOVES, "courier": COURIER_MOVES, "on_behalf": ON_BEHALF_MOVES}.get(by)
    if by == "assignment":
        allowed = to == "assigned" and order.status in ASSIGNABLE
    else:
        allowed = table is not None and to in table.get(order.status, frozenset())
    if not allowed:
        raise Conflict(f"An order cannot move from {order.status} to {to}.")
    if to in ("ready", "assigned") and getattr(order, "pin_needed", None):
        raise Conflict(
            "The order needs a pin: its address could not be placed. Set its pin (PATCH /orders/{id}) first.",
            code="pin_needed",
        )
    previous = order.status
    moment = clock.now()
    happened = at or moment
    if (previous == "assigned" and to == "ready") or to == "cancelled":
        cancel_assignment(order, actor_id)
        order.courier = None
        order.sequence = None
    if previous == "failed" and to == "ready":
        order.attempt += 1
        order.failure_reason = None
        order.finished_at = None  # type: ignore[assignment]
        order.proof_recipient_name = order.proof_photo_key = order.proof_notes = order.proof_method = None
        order.proof_signature_key = order.proof_scanned_code = order.proof_age_checked = None
        order.collected_amount_amd = None
        order.courier = None
        order.sequence = None
    order.status = to
    if previous != to:
        # Whatever the courier's app reported as refused is resolved once the order moves on.
        order.attention_reason = order.attention_move = None
        order.attention_held_amd = None
        order.attention_at = None  # type: ignore[assignment]
    order.updated_at = moment  # type: ignore[assignment]
    if to in FINAL:
        order.finished_at = happened  # type: ignore[assignment]
        if order.courier_id:
            order.last_courier = order.courier_id
    order.save()
    if to in FINAL and to != "cancelled":
        Assignment.update(status="done").where(
            (Assignment.order == order.id) & (Assignment.status == "active")
        ).execute()
    if previous != to:
        audit(
            order,
            "status_changed",
            actor_id,
            from_status=previous,
            to_status=to,
            reason=reason,
            attempt=order.attempt,
            at=happened,
            **data,
        )
        record_event(order.company_id, "order.status_changed", {**order_payload(order), "from": previous})
        # Messages to the recipient: queued rows in this same transaction, sent later (issue 28).
        outbox.on_status(order, to)
        if to in ANNOUNCED_STATUSES:
            announce(order, f"order.{to}")  # the shop's webhooks, in this transaction (the outbox)
