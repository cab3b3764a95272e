"""The orders listing: one Yerevan working day (GET /orders?date=), or the latest orders.

A dispatcher's board loads its day on every open and refresh, and a busy day is 2,000 orders, so
the answer's JSON is kept per (company, day, limit, needsPin filter) and served again while
nothing it was made of has changed. "Nothing changed" is checked on every request, in the
database: the company's orders are fingerprinted by (count, sum of revisions, sum of ids) from
one index (the database raises an order's revision on every UPDATE, by trigger: migration 0009,
so every committed change raises the sum; orders are never deleted), together with the company's
courier names.
An answer is kept only when the fingerprint read before and after its rows is the same, so it
is never newer or older than its key. Each serving process keeps its own few answers."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.jsonio import dumps_bytes
from appliance.common.kept import Answer, KeptAnswers
from appliance.common.problems import BadRequest
from appliance.dispatch.db import database
from appliance.dispatch.models import Courier, Order
from appliance.dispatch.orders.serializers import order_body
from appliance.dispatch.orders.state import FINAL

DEFAULT_LIMIT_WITHOUT_DATE = 200
DEFAULT_LIMIT_WITH_DATE = 1000
KEPT_ANSWERS = 16  # per serving process; a day of 2,000 orders is about 1 MB of JSON

_FIELD_OF_COLUMN = {"company_id": "company", "courier_id": "courier", "last_courier_id": "last_courier"}


def parse_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise BadRequest(
            "date must be a calendar date YYYY-MM-DD.", errors=[{"field": "date", "message": "invalid date"}]
        ) from None


def yerevan_day_bounds(day: date) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=clock.YEREVAN)
    return start, start + timedelta(days=1)


def _listing(*columns: Any, by_day: bool, needs_pin: bool | None = None) -> CompiledSelect:
    def build() -> peewee.SelectBase:
        query = Order.select(*columns).where(Order.company == Slot("company_id"))
        if needs_pin is not None:  # ?needsPin=: imported drafts whose address was not placed, or the rest
            query = query.where(Order.pin_needed.is_null(not needs_pin))
        if by_day:
            start, end = Slot("start", Order.created_at), Slot("end", Order.created_at)
            created = (Order.created_at >= start) & (Order.created_at < end)
            # A window with one bound is due at that bound.
            window_from = peewee.fn.COALESCE(Order.window_start, Order.window_end)
            window_to = peewee.fn.COALESCE(Order.window_end, Order.window_start)
            due = (window_from < end) & (window_to >= start)
            finished = (Order.finished_at >= start) & (Order.finished_at < end)
            carried = (Order.created_at < start) & Order.status.not_in(tuple(FINAL))
            query = query.where(created | due | finished | carried)
        return query.order_by(Order.created_at.desc(), Order.id.desc()).limit(Slot("limit"))

    return CompiledSelect(build)


_ROWS = {
    (by_day, needs_pin): _listing(by_day=by_day, needs_pin=needs_pin)
    for by_day in (True, False)
    for needs_pin in (None, True, False)
}
_FINGERPRINT = CompiledSelect(
    lambda: (
        Order.select(
            peewee.fn.COUNT(Order.id),
            peewee.fn.COALESCE(peewee.fn.SUM(Order.revision), 0),
            peewee.fn.SUM(Order.id),
        )
        .where(Order.company == Slot("company_id"))
        .tuples()
    )
)
_COURIER_NAMES = CompiledSelect(
    lambda: (
        Courier.select(Courier.id, Courier.display_name)
        .where(Courier.company == Slot("company_id"))
        .order_by(Courier.id)
        .tuples()
    )
)
_ORDER_FIELDS = [_FIELD_OF_COLUMN.get(f.column_name, f.column_name) for f in Order._meta.sorted_fields]


def listing_answer(
    kept: KeptAnswers,
    company_id: int,
    day_text: str | None,
    limit: int | None,
    needs_pin: bool | None = None,
) -> tuple[Answer, bool]:
    """The JSON of {orders, hasMore}: one Yerevan working day (created, due or finished that day,
    plus open work carried over) or, without a day, the latest orders; newest first; with
    ``needs_pin`` only the orders that need a pin (True) or only the others (False). Says whether
    the answer is kept (so worth compressing once)."""
    by_day = day_text is not None
    values: dict[str, Any] = {"company_id": company_id}
    if day_text is not None:
        values["start"], values["end"] = yerevan_day_bounds(parse_day(day_text))
    limit = limit or (DEFAULT_LIMIT_WITH_DATE if by_day else DEFAULT_LIMIT_WITHOUT_DATE)
    values["limit"] = limit + 1
    place = (company_id, day_text, limit, needs_pin)
    state = _state(company_id)
    answer = kept.get(place, state)
    if answer is not None:
        return answer, True
    rows = _ROWS[by_day, needs_pin].raw_rows(database, **values)
    names = dict(state[1])
    answer = Answer(
        dumps_bytes(
            {
                "orders": [
                    order_body(dict(zip(_ORDER_FIELDS, row, strict=True)), names) for row in rows[:limit]
                ],
                "hasMore": len(rows) > limit,
            }
        )
    )
    if _state(company_id) != state:  # something was committed while the rows were read
        return answer, False
    kept.put(place, state, answer)
    return answer, True


def _state(company_id: int) -> tuple[Any, ...]:
    return (
        tuple(_FINGERPRINT.raw_rows(database, company_id=company_id)[0]),
        tuple(_COURIER_NAMES.raw_rows(database, company_id=company_id)),
    )
