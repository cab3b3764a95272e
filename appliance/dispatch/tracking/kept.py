"""Tracking views served again while nothing they show has changed.

A recipient's page asks for its view every few seconds while the parcel moves, and making one is
about ten queries and a route on the roads. Each serving process keeps the JSON of the views it
made (appliance/common/kept.py) under the state they were made from, read on every request in one
query: the link (revocation, expiry), the order's revision (raised by the database on every
UPDATE, so every status move, assignment and delivery), the company's and the courier's rows (the
branding and name shown), the rating, the courier's newest fix and the revisions of the courier's
open stops (the arrival estimate and the stops ahead). What else can change the view is time
(a fix growing stale, the depot as the origin instead): a kept view lasts ``KEEP_SECONDS`` at most
from the state it was made of, about one refresh of the page."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.jsonio import dumps_bytes
from appliance.common.kept import Answer, KeptAnswers
from appliance.dispatch.db import database
from appliance.dispatch.eta.service import OPEN  # the stops an estimate counts
from appliance.dispatch.models import Company, Courier, CourierLocation, Order, Rating, TrackingLink
from appliance.dispatch.runtime import DispatchRuntime
from appliance.dispatch.tracking import links

KEEP_SECONDS = 5
_KEEP = timedelta(seconds=KEEP_SECONDS)
KEPT_VIEWS = 2048  # per serving process; a view is 1 to 10 KB of JSON with its route


def _state_query() -> peewee.SelectBase:
    courier_id = peewee.fn.COALESCE(Order.courier, Order.last_courier)
    run = Order.alias("run")
    newest_fix = (
        CourierLocation.select(CourierLocation.id)
        .where(CourierLocation.courier == courier_id)
        .order_by(CourierLocation.captured_at.desc())
        .limit(1)
    )
    rating = Rating.select(Rating.id).where(Rating.order == Order.id)

    def of_run(aggregate: Any) -> peewee.SelectBase:
        return run.select(aggregate).where((run.courier == Order.courier) & run.status.in_(OPEN))

    return (
        TrackingLink.select(
            TrackingLink.order,
            TrackingLink.revoked_at,
            TrackingLink.expires_at,
            Order.revision,
            *Company._meta.sorted_fields,  # type: ignore[attr-defined]
            Courier.display_name,
            Courier.phone,
            rating,
            newest_fix,
            of_run(peewee.fn.COUNT(run.id)),
            of_run(peewee.fn.SUM(run.revision)),
            of_run(peewee.fn.SUM(run.id)),
        )
        .join(Order, on=TrackingLink.order == Order.id)
        .join(Company, on=Order.company == Company.id)
        .join(Courier, peewee.JOIN.LEFT_OUTER, on=Courier.id == courier_id)
        .where(TrackingLink.token_hash == Slot("digest"))
        .limit(1)
        .tuples()
    )


_STATE = CompiledSelect(_state_query)


def view_state(digest: str) -> tuple[Any, ...] | None:
    """The state of the link's view, or None for an unknown link."""
    rows = _STATE.raw_rows(database, digest=digest)
    if not rows:
        return None
    return tuple(rows[0])


def kept_view(rt: DispatchRuntime, digest: str, make: Callable[[], dict[str, Any]]) -> tuple[Answer, bool]:
    """The view's JSON (and whether it is kept): the kept one while its state holds, else
    ``make()`` encoded (and kept when nothing was committed while it was made). Unknown, revoked
    and expired links are NotFound either way (``make`` says so, from the same rows it reads)."""
    kept: KeptAnswers = rt.tracking_views
    read_at = clock.now()
    state = view_state(digest)
    if state is not None:
        answer = kept.get(digest, state, max_age=_KEEP)
        if answer is not None and not _ended(state):
            return answer, True
    answer = Answer(dumps_bytes(make()))
    if state is None or view_state(digest) != state:
        return answer, False
    kept.put(digest, state, answer, read_at=read_at)
    return answer, True


def _ended(state: tuple[Any, ...]) -> bool:
    """Revoked or expired since it was kept (`links.is_live`, as find_link, on the state's columns)."""
    _order, revoked_at, expires_at = state[:3]
    return not links.is_live(revoked_at, TrackingLink.expires_at.python_value(expires_at))
