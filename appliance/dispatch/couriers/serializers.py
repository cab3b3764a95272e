"""JSON shapes of couriers, their fixes and shifts (their OpenAPI models are in schemas.py)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.dispatch.auth import credentials
from appliance.dispatch.cash.service import outstanding
from appliance.dispatch.couriers.lookups import last_shift, latest_location, open_shift
from appliance.dispatch.models import (
    Courier,
    CourierLocation,
    LinkToken,
    Order,
    Shift,
    User,
)
from appliance.dispatch.orders.statuses import ACTIVE


def location_body(row: CourierLocation | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "lat": row.lat,
        "lon": row.lon,
        "capturedAt": clock.iso(row.captured_at),
        "accuracyM": row.accuracy_m,
        "source": row.source,
    }


def shift_body(shift: Shift | None) -> dict[str, Any] | None:
    if shift is None:
        return None
    ended_by = User.get_or_none(User.id == shift.ended_by_id) if shift.ended_by_id else None
    return {
        "id": str(shift.id),
        "status": "ended" if shift.ended_at else ("on_break" if shift.on_break else "active"),
        "startedAt": clock.iso(shift.started_at),
        "endedAt": clock.iso(shift.ended_at),
        "endedByName": ended_by.display_name if ended_by else None,
    }


def _invited_email(courier: Courier) -> str | None:
    """A profile made by POST /couriers shows the address its invite went to until an account is
    attached."""
    row = (
        LinkToken.select(LinkToken.email)
        .where(LinkToken.courier == courier.id)
        .order_by(LinkToken.id.desc())
        .first()
    )
    return row.email if row is not None else None


def _address(courier: Courier, user: User | None) -> str | None:
    if user is None:
        return _invited_email(courier)
    return user.email or credentials.address_of(user, courier.company_id)


def courier_body(courier: Courier, *, detailed: bool = False) -> dict[str, Any]:
    user = User.get_or_none(User.id == courier.user_id) if courier.user_id else None
    body: dict[str, Any] = {
        "id": str(courier.id),
        "userId": str(courier.user_id) if courier.user_id else None,
        "displayName": courier.display_name,
        "email": (user.email or credentials.address_of(user, courier.company_id))
        if user
        else _invited_email(courier),
        "phone": courier.phone,
        "vehicleLabel": courier.vehicle_label,
        "photoUrl": courier.photo_url,
        "preferredLanguage": courier.preferred_language,
        "onboardingCompleted": courier.onboarding_completed,
        "active": courier.active,
        "online": courier.online,
        "location": location_body(latest_location(courier.id)),
        "shift": shift_body(open_shift(courier.id)),
        "lastShift": shift_body(last_shift(courier.id)),
        "outstandingCashAmd": outstanding(courier.id),
        "createdAt": clock.iso(courier.created_at),
    }
    if detailed:
        body["openOrders"] = (
            Order.select().where((Order.courier == courier.id) & Order.status.in_(tuple(ACTIVE))).count()
        )
    return body
