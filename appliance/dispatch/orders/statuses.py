"""The order statuses and the named sets every area uses, in one place (a leaf module: it imports
nothing, so any area may use it without an import cycle; ``orders/state.py`` re-exports it with
the table of moves)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Status(StrEnum):
    DRAFT = "draft"
    READY = "ready"
    ASSIGNED = "assigned"
    PICKED_UP = "picked_up"
    ARRIVED = "arrived"
    DELIVERED = "delivered"
    FAILED = "failed"
    CANCELLED = "cancelled"


def _values(*members: Status) -> frozenset[str]:
    # Plain strings: database drivers bind them as text without knowing the enum.
    return frozenset(str(m.value) for m in members)


# Finished: nothing moves it on but a retry of a failed order.
FINAL = _values(Status.DELIVERED, Status.FAILED, Status.CANCELLED)
# With a courier and not finished: the courier's run, their open orders, the stops an estimate counts.
ACTIVE = _values(Status.ASSIGNED, Status.PICKED_UP, Status.ARRIVED)
# The parcel is in the courier's hands: on its way to the recipient (the tracking page's
# on_the_way; a late notice, a delivery on the courier's behalf, a hand-over to another courier).
ON_THE_WAY = _values(Status.PICKED_UP, Status.ARRIVED)
# What assignment (POST /orders/{id}/assign, /plans/apply) moves to assigned.
ASSIGNABLE = _values(Status.READY, Status.ASSIGNED)


# Moves a dispatcher may make with POST /orders/{id}/status.
DISPATCHER_MOVES: dict[str, frozenset[str]] = {
    "draft": frozenset({"ready", "cancelled"}),
    "ready": frozenset({"draft", "cancelled"}),
    "assigned": frozenset({"ready", "cancelled"}),  # ready = unassign
    "picked_up": frozenset({"failed"}),
    "arrived": frozenset({"failed"}),
    "failed": frozenset({"ready"}),  # a retry: a new attempt starts
    "delivered": frozenset(),
    "cancelled": frozenset(),
}
# Moves a courier makes with POST /courier/orders/{id}/status on an order assigned to them.
COURIER_MOVES: dict[str, frozenset[str]] = {
    "assigned": frozenset({"picked_up", "failed"}),
    "picked_up": frozenset({"arrived", "delivered", "failed"}),
    "arrived": frozenset({"delivered", "failed"}),
}
# A dispatcher recording a delivery for the courier (POST /orders/{id}/deliver-for-courier).
ON_BEHALF_MOVES: dict[str, frozenset[str]] = {
    "picked_up": frozenset({"delivered"}),
    "arrived": frozenset({"delivered"}),
}

# What each kind of caller may do with an order in each status, sent with every order
# (``allowedMoves``) so the console and the courier app offer the API's own table instead of a copy.
ALLOWED_MOVES: dict[str, dict[str, Any]] = {
    status.value: {
        "status": sorted(DISPATCHER_MOVES.get(status.value, frozenset())),
        "courier": sorted(COURIER_MOVES.get(status.value, frozenset())),
        "assign": status.value in ASSIGNABLE,
        "deliverForCourier": bool(ON_BEHALF_MOVES.get(status.value)),
        "reassign": status.value in ON_THE_WAY,
    }
    for status in Status
}


def needs_code_to_deliver(order: Any) -> bool:
    """Whether delivering ``order`` takes the recipient's delivery code."""
    return bool(order.otp_required)


def late_notice_allowed(order: Any) -> bool:
    """The one rule for a late notice (POST /orders/{id}/notify-late, the recipient messages'
    late notice): the order is on its way, as the specification says for notify-late."""
    return order.status in ON_THE_WAY
