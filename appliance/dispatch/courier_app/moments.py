"""When a courier's move really happened (issue 46): a move queued on the phone without signal
carries the moment it was tapped (``occurredAt``, the phone's clock) and is recorded at that
moment, so on-time rates, cash times and the recipient's receipt tell the truth.

A phone's clock is trusted within bounds only: not in the future, not before the order's previous
move, not more than ``OFFLINE_WINDOW`` ago (the longest a move waits in the app's outbox). Outside
them the server's time is recorded, with the phone's moment and the difference beside it in the
order's history, so a wrong clock is visible rather than silently believed.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from appliance.common import clock
from appliance.dispatch.models import OrderEvent

OFFLINE_WINDOW = dt.timedelta(hours=12)

# The events that are moves of the order (status changes and (re)assignment): a tap cannot come
# before one of them. Notices, messages and attention flags are written at the server's time and
# may well come after a tap that waited offline.
_MOVES = ("status_changed", "assigned")


@dataclasses.dataclass(frozen=True)
class Moment:
    at: dt.datetime
    # What the history keeps beside the move: the phone's moment when it was refused (and by how
    # much it differed), the time the server heard of it when it was accepted.
    notes: dict[str, Any]


def _previous_move(order_id: int) -> dt.datetime | None:
    latest = (
        OrderEvent.select(OrderEvent.created_at)
        .where((OrderEvent.order == order_id) & OrderEvent.kind.in_(_MOVES))
        .order_by(OrderEvent.created_at.desc())
        .first()
    )
    return latest.created_at if latest is not None else None


def of_move(order_id: int, occurred_at: dt.datetime | None, now: dt.datetime) -> Moment:
    """The moment to record a courier's move at: ``occurred_at`` when within bounds, else ``now``."""
    if occurred_at is None:
        return Moment(now, {})
    occurred_at = occurred_at.astimezone(dt.UTC)
    previous = _previous_move(order_id)
    if occurred_at > now:
        refused = "future"
    elif now - occurred_at > OFFLINE_WINDOW:
        refused = "older_than_offline_window"
    elif previous is not None and occurred_at < previous:
        refused = "before_previous_move"
    else:
        return Moment(occurred_at, {"receivedAt": clock.iso(now)})
    return Moment(
        now,
        {
            "occurredAtRefused": clock.iso(occurred_at),
            "occurredAtRefusedBecause": refused,
            "clockDifferenceSeconds": round((now - occurred_at).total_seconds()),
        },
    )
