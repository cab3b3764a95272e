"""Read-only lookups of a courier's newest fix and shifts, shared by the rules and the serializers."""

from __future__ import annotations

from appliance.dispatch.models import (
    CourierLocation,
    Shift,
)


def latest_location(courier_id: int) -> CourierLocation | None:
    return (
        CourierLocation.select()
        .where(CourierLocation.courier == courier_id)
        .order_by(CourierLocation.captured_at.desc())
        .first()
    )


def open_shift(courier_id: int) -> Shift | None:
    return Shift.get_or_none((Shift.courier == courier_id) & (Shift.open_flag == 1))


def last_shift(courier_id: int) -> Shift | None:
    return (
        Shift.select()
        .where((Shift.courier == courier_id) & Shift.ended_at.is_null(False))
        .order_by(Shift.ended_at.desc())
        .first()
    )
