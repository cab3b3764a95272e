"""Read-only lookups of a courier's newest fix and shifts, shared by the rules and the serializers.

They run on the hottest paths (every GPS batch, every tracking view, every courier listing), so
their SQL text is built once (appliance/common/compiled.py)."""

from __future__ import annotations

from appliance.common.compiled import CompiledSelect, Slot
from appliance.dispatch.db import database
from appliance.dispatch.models import (
    CourierLocation,
    Shift,
)

_LATEST_FIX = CompiledSelect(
    lambda: (
        CourierLocation.select()
        .where(CourierLocation.courier == Slot("courier_id"))
        .order_by(CourierLocation.captured_at.desc())
        .limit(1)
    )
)
_OPEN_SHIFT = CompiledSelect(
    lambda: Shift.select().where((Shift.courier == Slot("courier_id")) & (Shift.open_flag == 1)).limit(1)
)
_LAST_SHIFT = CompiledSelect(
    lambda: (
        Shift.select()
        .where((Shift.courier == Slot("courier_id")) & Shift.ended_at.is_null(False))
        .order_by(Shift.ended_at.desc())
        .limit(1)
    )
)


def latest_location(courier_id: int) -> CourierLocation | None:
    return _LATEST_FIX.first(database, courier_id=courier_id)


def open_shift(courier_id: int) -> Shift | None:
    return _OPEN_SHIFT.first(database, courier_id=courier_id)


def last_shift(courier_id: int) -> Shift | None:
    return _LAST_SHIFT.first(database, courier_id=courier_id)
