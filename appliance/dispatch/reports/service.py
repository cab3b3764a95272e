"""Report rows for a company and a range of Yerevan days [from, to), read from the database in
pages (keyset on id) so that an export of any size keeps flat memory."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from zoneinfo import ZoneInfo

from appliance.common.db import write_transaction
from appliance.dispatch import audit
from appliance.dispatch.db import database
from appliance.dispatch.models import Courier
from appliance.dispatch.models.orders import Collection, Order, OrderEvent, Settlement

YEREVAN = ZoneInfo("Asia/Yerevan")
PAGE = 500
MAX_DAYS = 366
KINDS = ("orders", "cash", "couriers")

ORDER_COLUMNS = (
    "order", "external_ref", "created_at", "window_start", "window_end", "finished_at",
    "status", "courier", "recipient", "address_hy", "amount_amd", "cod_amount_amd",
    "collected_amount_amd", "failure_reason",
)  # fmt: skip
# One row per collection (kind "collection": the order, the amount collected) and one per handover
# (kind "handover": what was expected, received and short), so that every amount column sums to
# what it says: a handover's received amount is never repeated on its orders' rows.
CASH_COLUMNS = (
    "kind", "order", "courier", "amount_amd", "collected_at", "settlement", "settlement_status",
    "submitted_at", "confirmed_at", "confirmed_by", "expected_amd", "received_amd", "shortfall_amd",
)  # fmt: skip
COURIER_COLUMNS = (
    "courier", "deliveries", "failures", "failures_by_reason", "delivered_with_window",
    "on_time", "on_time_rate", "average_pickup_to_delivery_minutes",
)  # fmt: skip


class RangeError(ValueError):
    """The range asked for is not one a report can be made for (the message says why)."""


def utc_bounds(start: dt.date, end: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """[start, end) as Yerevan days, in UTC; ``end`` after ``start`` and at most MAX_DAYS on."""
    if end <= start:
        raise RangeError("'to' must be after 'from' (the range is [from, to))")
    if (end - start).days > MAX_DAYS:
        raise RangeError(f"a report covers at most {MAX_DAYS} days")

    def at(day: dt.date) -> dt.datetime:
        local = dt.datetime.combine(day, dt.time(), YEREVAN)
        return local.astimezone(dt.UTC)

    return at(start), at(end)


def _local(value: dt.datetime | None) -> dt.datetime | str:
    """Yerevan wall time to the second, without a zone (a spreadsheet's dates have none); "" for
    none. The CSV writes it as YYYY-MM-DD HH:MM:SS, the workbook as a date cell."""
    if value is None:
        return ""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(YEREVAN).replace(tzinfo=None, microsecond=0)


def _pages(query, model) -> Iterator:  # type: ignore[no-untyped-def]
    """Rows of ``query`` in id order, PAGE at a time: never the whole result in memory."""
    last = 0
    while True:
        page = list(query.where(model.id > last).order_by(model.id).limit(PAGE))
        if not page:
            return
        yield from page
        last = page[-1].id


def _courier_names(company_id: int) -> dict[int, str]:
    # A company's couriers are few (tens); their names are looked up once, not per row.
    return {c.id: c.display_name for c in Courier.select().where(Courier.company == company_id)}


def order_rows(company_id: int, start: dt.date, end: dt.date) -> Iterator[list[object]]:
    """One row per order created in the range."""
    lo, hi = utc_bounds(start, end)
    names = _courier_names(company_id)
    query = Order.select().where(Order.company == company_id, Order.created_at >= lo, Order.created_at < hi)
    for o in _pages(query, Order):
        courier_id = o.courier_id or o.last_courier_id
        yield [
            o.public_id, o.external_ref or "", _local(o.created_at), _local(o.window_start),
            _local(o.window_end), _local(o.finished_at), o.status,
            names.get(courier_id, "") if courier_id else "", o.recipient_name, o.address_hy,
            o.amount_amd, o.cod_amount_amd if o.is_cod else 0,
            o.collected_amount_amd if o.collected_amount_amd is not None else "",
            o.failure_reason or "",
        ]  # fmt: skip


def cash_rows(company_id: int, start: dt.date, end: dt.date) -> Iterator[list[object]]:
    """One row per collection made in the range (with the handover it went into), then one per
    handover submitted in the range with its expected, received and short amounts."""
    lo, hi = utc_bounds(start, end)
    names = _courier_names(company_id)
    # The order's public id comes in the same query (one query per page, not one per row).
    query = (
        Collection.select(Collection, Order.public_id)
        .join(Order)
        .where(
            Collection.company == company_id,
            Collection.collected_at >= lo,
            Collection.collected_at < hi,
        )
    )
    # Handovers are few (about one per courier and day): each is read once.
    settlements: dict[int, Settlement] = {}
    for c in _pages(query, Collection):
        s = None
        if c.settlement_id is not None:
            s = settlements.get(c.settlement_id)
            if s is None:
                s = Settlement.get_by_id(c.settlement_id)
                settlements[c.settlement_id] = s
        yield [
            "collection", c.order.public_id, names.get(c.courier_id, ""), c.amount_amd,
            _local(c.collected_at), s.id if s else "", s.status if s else "", "", "", "", "", "", "",
        ]  # fmt: skip
    handovers = Settlement.select().where(
        Settlement.company == company_id, Settlement.submitted_at >= lo, Settlement.submitted_at < hi
    )
    for s in _pages(handovers, Settlement):
        by = s.accepted_by.display_name if s.accepted_by_id is not None else ""
        yield [
            "handover", "", names.get(s.courier_id, ""), "", "", s.id, s.status, _local(s.submitted_at),
            _local(s.confirmed_at), by, s.expected_amd,
            s.received_amd if s.received_amd is not None else "",
            s.shortfall_amd if s.shortfall_amd is not None else "",
        ]  # fmt: skip


@dataclasses.dataclass
class CourierFigures:
    courier_id: int
    name: str
    deliveries: int = 0
    failures_by_reason: dict[str, int] = dataclasses.field(default_factory=dict)
    delivered_with_window: int = 0
    on_time: int = 0
    minutes_total: float = 0.0
    minutes_count: int = 0

    @property
    def failures(self) -> int:
        return sum(self.failures_by_reason.values())

    @property
    def on_time_rate(self) -> float | None:
        if not self.delivered_with_window:
            return None
        return round(self.on_time / self.delivered_with_window, 4)

    @property
    def average_minutes(self) -> float | None:
        if not self.minutes_count:
            return None
        return round(self.minutes_total / self.minutes_count, 1)

    def as_dict(self) -> dict[str, object]:
        return {
            "courierId": self.courier_id,
            "courier": self.name,
            "deliveries": self.deliveries,
            "failures": self.failures,
            "failuresByReason": dict(sorted(self.failures_by_reason.items())),
            "deliveredWithWindow": self.delivered_with_window,
            "onTime": self.on_time,
            "onTimeRate": self.on_time_rate,
            "averagePickupToDeliveryMinutes": self.average_minutes,
        }


def _pickups(order_ids: list[int]) -> dict[int, dt.datetime]:
    """The first pick-up of each order (its audit trail), for one page of orders."""
    first: dict[int, dt.datetime] = {}
    events = OrderEvent.select(OrderEvent.order, OrderEvent.created_at).where(
        OrderEvent.order.in_(order_ids), OrderEvent.to_status == "picked_up"
    )
    for e in events:
        if e.order_id not in first or e.created_at < first[e.order_id]:
            first[e.order_id] = e.created_at
    return first


def is_on_time(finished: dt.datetime, start: dt.datetime | None, end: dt.datetime) -> bool:
    """Delivered inside the window: an early delivery is not on time (the recipient was told
    when to be home), nor a late one."""
    return (start is None or finished >= start) and finished <= end


def courier_figures(company_id: int, start: dt.date, end: dt.date) -> list[CourierFigures]:
    """Per courier, the orders finished (delivered or failed) in the range."""
    lo, hi = utc_bounds(start, end)
    names = _courier_names(company_id)
    figures: dict[int, CourierFigures] = {}
    query = Order.select().where(
        Order.company == company_id,
        Order.finished_at >= lo,
        Order.finished_at < hi,
        Order.status.in_(("delivered", "failed")),
    )
    page: list[Order] = []

    def account(orders: list[Order]) -> None:
        pickups = _pickups([o.id for o in orders if o.status == "delivered"])
        for o in orders:
            cid = o.courier_id or o.last_courier_id
            if cid is None:
                continue
            f = figures.setdefault(cid, CourierFigures(cid, names.get(cid, "")))
            if o.status == "failed":
                reason = o.failure_reason or "unspecified"
                f.failures_by_reason[reason] = f.failures_by_reason.get(reason, 0) + 1
                continue
            f.deliveries += 1
            if o.window_end is not None:
                f.delivered_with_window += 1
                if is_on_time(o.finished_at, o.window_start, o.window_end):
                    f.on_time += 1
            picked = pickups.get(o.id)
            if picked is not None:
                f.minutes_total += (o.finished_at - picked).total_seconds() / 60
                f.minutes_count += 1

    for o in _pages(query, Order):
        page.append(o)
        if len(page) >= PAGE:
            account(page)
            page = []
    if page:
        account(page)
    return sorted(figures.values(), key=lambda f: (f.name, f.courier_id))


def courier_rows(company_id: int, start: dt.date, end: dt.date) -> Iterator[list[object]]:
    for f in courier_figures(company_id, start, end):
        reasons = "; ".join(f"{k}: {v}" for k, v in sorted(f.failures_by_reason.items()))
        yield [
            f.name, f.deliveries, f.failures, reasons, f.delivered_with_window, f.on_time,
            "" if f.on_time_rate is None else f.on_time_rate,
            "" if f.average_minutes is None else f.average_minutes,
        ]  # fmt: skip


def report(
    kind: str, company_id: int, start: dt.date, end: dt.date
) -> tuple[tuple[str, ...], Iterator[list[object]]]:
    """The header and the rows of one kind of report; the range is checked at once, and the export
    is recorded in the audit log before a row is read."""
    utc_bounds(start, end)
    if kind in KINDS:
        with write_transaction(database):
            exported = {"report": kind, "start": start.isoformat(), "end": end.isoformat()}
            audit.record("report.exported", f"report:{kind}", company_id=company_id, after=exported)
    if kind == "orders":
        return ORDER_COLUMNS, order_rows(company_id, start, end)
    if kind == "cash":
        return CASH_COLUMNS, cash_rows(company_id, start, end)
    if kind == "couriers":
        return COURIER_COLUMNS, courier_rows(company_id, start, end)
    raise RangeError(f"unknown report {kind!r}: one of {', '.join(KINDS)}")
