"""Shop statements and remittances (issue 47; docs/statements.md).

A shop is an integration key: the orders it creates or imports carry its id (order.shop_key_id).
A statement covers the Yerevan days [from, to) like the reports: the shop's orders delivered in it
(finished then) with the cash collected and the fee of each, and the orders returned (failed, the
parcel going back to the shop). Net owed is the cash collected less the fees, and may be negative
(the shop then owes the company).

The cash adds up three ways, and the statement says whether it does (``cash.balanced``): what the
orders record as collected, what the cash ledger holds for the same orders (the cash report's
collection rows), and how much of it couriers have handed over (in confirmed handovers) or still
hold. Beside them, how much of it has its fiscal receipt printed on e-HDM (``receiptedAmd``; sale
receipts printed for the same orders) and how much waits for one: a receipt that lags (queued, or
waiting on a person's decision) does not hold the shop's money back, so it is shown, not a bar.
The owner marks a period paid (a remittance, audited) only while it balances, once the period is
over, and never a period overlapping one already paid.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.common.problems import Conflict, Invalid, NotFound
from appliance.dispatch import audit
from appliance.dispatch.db import database
from appliance.dispatch.models import (
    Collection,
    FiscalReceipt,
    IntegrationKey,
    Order,
    Settlement,
    ShopRemittance,
)
from appliance.dispatch.orders import ids
from appliance.dispatch.reports.service import YEREVAN, utc_bounds

MAX_LINES = 2000  # the JSON statement's lines; the CSV and the workbook carry every one
COLUMNS = (
    "kind", "order", "external_ref", "finished_at", "status", "collected_amount_amd",
    "delivery_fee_amd", "net_amd",
)  # fmt: skip


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def shop_key(company_id: int, key_id: int) -> IntegrationKey:
    """The company's integration key (revoked ones too: their statements remain), or 404."""
    ids.require(key_id, "shop")
    key = IntegrationKey.get_or_none((IntegrationKey.id == key_id) & (IntegrationKey.company == company_id))
    if key is None:
        raise NotFound("No such shop.")
    return key


def shop_of(company_id: int, shop_id: str | None) -> int | None:
    """The key id a dispatcher named as an order's shop (``shopId``), checked to be the company's;
    None for none. 422 otherwise: the order names it, it is no path to find."""
    if shop_id is None:
        return None
    key_id = int(shop_id)
    if not ids.storable(key_id) or not (
        IntegrationKey.select()
        .where((IntegrationKey.id == key_id) & (IntegrationKey.company == company_id))
        .exists()
    ):
        raise Invalid(
            "No such shop.",
            errors=[{"field": "shopId", "message": "not one of the company's integration keys"}],
        )
    return key_id


def shops(company_id: int) -> list[dict[str, Any]]:
    keys = IntegrationKey.select().where(IntegrationKey.company == company_id).order_by(IntegrationKey.id)
    return [_shop(k) for k in keys]


def _shop(key: IntegrationKey) -> dict[str, Any]:
    return {"id": str(key.id), "name": key.name, "revoked": key.revoked_at is not None}


def _finished(company_id: int, key_id: int, status: str, lo: dt.datetime, hi: dt.datetime) -> Any:
    return Order.select().where(
        (Order.company == company_id)
        & (Order.shop_key_id == key_id)
        & (Order.status == status)
        & (Order.finished_at >= lo)
        & (Order.finished_at < hi)
    )


@dataclasses.dataclass
class Totals:
    delivered: int = 0
    returned: int = 0
    collected_amd: int = 0
    fees_amd: int = 0
    ledger_amd: int = 0
    handed_over_amd: int = 0
    receipted_amd: int = 0

    @property
    def net_amd(self) -> int:
        return self.collected_amd - self.fees_amd


def totals(company_id: int, key_id: int, start: dt.date, end: dt.date) -> Totals:
    """The statement's sums, each one query (the database adds them up, whatever the count)."""
    lo, hi = utc_bounds(start, end)
    delivered = _finished(company_id, key_id, "delivered", lo, hi)
    count, collected, fees = delivered.select(
        peewee.fn.COUNT(Order.id),
        peewee.fn.COALESCE(peewee.fn.SUM(peewee.fn.COALESCE(Order.collected_amount_amd, 0)), 0),
        peewee.fn.COALESCE(peewee.fn.SUM(peewee.fn.COALESCE(Order.delivery_fee_amd, 0)), 0),
    ).tuples()[0]
    returned = _finished(company_id, key_id, "failed", lo, hi).count()
    ledger = (
        Collection.select(
            peewee.fn.COALESCE(peewee.fn.SUM(Collection.amount_amd), 0),
            peewee.fn.COALESCE(
                peewee.fn.SUM(
                    peewee.Case(None, [(Settlement.status == "confirmed", Collection.amount_amd)], 0)
                ),
                0,
            ),
        )
        .join(Order, on=(Collection.order == Order.id))
        .switch(Collection)
        .join(Settlement, peewee.JOIN.LEFT_OUTER, on=(Collection.settlement == Settlement.id))
        .where(
            (Collection.company == company_id)
            & (Order.company == company_id)
            & (Order.shop_key_id == key_id)
            & (Order.status == "delivered")
            & (Order.finished_at >= lo)
            & (Order.finished_at < hi)
        )
        .tuples()[0]
    )
    receipted = (
        FiscalReceipt.select(peewee.fn.COALESCE(peewee.fn.SUM(FiscalReceipt.cash_amd), 0))
        .join(Order, on=(FiscalReceipt.order == Order.id))
        .where(
            (FiscalReceipt.company == company_id)
            & (FiscalReceipt.kind == "sale")
            & (FiscalReceipt.status == "printed")
            & (Order.company == company_id)
            & (Order.shop_key_id == key_id)
            & (Order.status == "delivered")
            & (Order.finished_at >= lo)
            & (Order.finished_at < hi)
        )
        .scalar()
    )
    return Totals(
        receipted_amd=int(receipted or 0),
        delivered=int(count),
        returned=int(returned),
        collected_amd=int(collected),
        fees_amd=int(fees),
        ledger_amd=int(ledger[0]),
        handed_over_amd=int(ledger[1]),
    )


def lines(company_id: int, key_id: int, start: dt.date, end: dt.date) -> Iterator[list[object]]:
    """One row per order delivered or returned in the period (by when it finished), then a total
    row: the statement as CSV and workbook rows (COLUMNS)."""
    lo, hi = utc_bounds(start, end)
    query = Order.select().where(
        (Order.company == company_id)
        & (Order.shop_key_id == key_id)
        & Order.status.in_(("delivered", "failed"))
        & (Order.finished_at >= lo)
        & (Order.finished_at < hi)
    )
    last = 0
    while True:
        page = list(query.where(Order.id > last).order_by(Order.id).limit(500))
        for o in page:
            collected = (o.collected_amount_amd or 0) if o.status == "delivered" else 0
            fee = (o.delivery_fee_amd or 0) if o.status == "delivered" else 0
            local = _aware(o.finished_at).astimezone(YEREVAN).replace(tzinfo=None, microsecond=0)
            kind = "delivered" if o.status == "delivered" else "returned"
            yield [kind, o.public_id, o.external_ref or "", local, o.status, collected, fee, collected - fee]
        if len(page) < 500:
            break
        last = page[-1].id
    t = totals(company_id, key_id, start, end)
    yield ["total", "", "", "", "", t.collected_amd, t.fees_amd, t.net_amd]


def remittance_body(r: ShopRemittance) -> dict[str, Any]:
    return {
        "id": str(r.id),
        "shopId": str(r.shop_key_id),
        "from": r.period_start.isoformat(),
        "to": r.period_end.isoformat(),
        "orders": r.orders,
        "codCollectedAmd": r.collected_amd,
        "feesAmd": r.fees_amd,
        "netAmd": r.net_amd,
        "reference": r.reference,
        "paidAt": clock.iso(r.paid_at),
    }


def _overlapping(company_id: int, key_id: int, start: dt.date, end: dt.date) -> Any:
    return ShopRemittance.select().where(
        (ShopRemittance.company == company_id)
        & (ShopRemittance.shop_key_id == key_id)
        & (ShopRemittance.period_start < end)
        & (ShopRemittance.period_end > start)
    )


def statement(company_id: int, key_id: int, start: dt.date, end: dt.date) -> dict[str, Any]:
    key = shop_key(company_id, key_id)
    t = totals(company_id, key_id, start, end)
    rows: list[dict[str, Any]] = []
    for row in lines(company_id, key_id, start, end):
        if row[0] == "total" or len(rows) >= MAX_LINES:
            continue
        kind, public_id, ref, finished, _status, collected, fee, net = row
        rows.append(
            {
                "kind": kind,
                "publicId": public_id,
                "externalRef": ref or None,
                "finishedAt": finished.isoformat() if isinstance(finished, dt.datetime) else None,
                "codCollectedAmd": collected,
                "feeAmd": fee,
                "netAmd": net,
            }
        )
    paid = _overlapping(company_id, key_id, start, end).order_by(ShopRemittance.period_start)
    return {
        "shop": _shop(key),
        "from": start.isoformat(),
        "to": end.isoformat(),
        "delivered": t.delivered,
        "returned": t.returned,
        "codCollectedAmd": t.collected_amd,
        "feesAmd": t.fees_amd,
        "netAmd": t.net_amd,
        "cash": {
            "ordersCollectedAmd": t.collected_amd,
            "ledgerCollectedAmd": t.ledger_amd,
            "handedOverAmd": t.handed_over_amd,
            "withCouriersAmd": t.ledger_amd - t.handed_over_amd,
            "receiptedAmd": t.receipted_amd,
            "withoutReceiptAmd": t.collected_amd - t.receipted_amd,
            "balanced": t.collected_amd == t.ledger_amd,
        },
        "lines": rows,
        "linesComplete": t.delivered + t.returned <= MAX_LINES,
        "remittances": [remittance_body(r) for r in paid],
    }


def remittances(company_id: int, key_id: int) -> list[dict[str, Any]]:
    shop_key(company_id, key_id)
    rows = (
        ShopRemittance.select()
        .where((ShopRemittance.company == company_id) & (ShopRemittance.shop_key_id == key_id))
        .order_by(ShopRemittance.period_start.desc())
        .limit(500)
    )
    return [remittance_body(r) for r in rows]


def mark_paid(
    company_id: int, key_id: int, start: dt.date, end: dt.date, reference: str, actor_id: int | None
) -> dict[str, Any]:
    """The owner's remittance of a period: the statement's sums as they stand, in one transaction."""
    utc_bounds(start, end)
    today = clock.now().astimezone(YEREVAN).date()
    if end > today:
        raise Conflict(
            "The period has not ended yet: a statement is paid once its last day is over.", code="period_open"
        )
    with write_transaction(database):
        # The key's row locked (PostgreSQL; SQLite's write transaction is one at a time already):
        # two payments of overlapping periods of one shop cannot both pass the check below.
        ids.require(key_id, "shop")
        key = locked(
            IntegrationKey.select().where(
                (IntegrationKey.id == key_id) & (IntegrationKey.company == company_id)
            )
        ).first()
        if key is None:
            raise NotFound("No such shop.")
        if _overlapping(company_id, key_id, start, end).exists():
            raise Conflict(
                "This shop's statement for the period, or part of it, is already paid.", code="already_paid"
            )
        t = totals(company_id, key_id, start, end)
        if t.collected_amd != t.ledger_amd:
            raise Conflict(
                "The statement's cash does not match the cash ledger; it cannot be paid until they agree.",
                code="statement_unbalanced",
            )
        row = ShopRemittance.create(
            company=company_id,
            shop_key_id=key_id,
            period_start=start,
            period_end=end,
            orders=t.delivered,
            collected_amd=t.collected_amd,
            fees_amd=t.fees_amd,
            net_amd=t.net_amd,
            reference=reference,
            paid_at=clock.now(),
            paid_by_id=actor_id,
        )
        body = remittance_body(row)
        audit.record("statement.paid", f"shop:{key_id}", company_id=company_id, after=body)
        return body


def fee_is_paid(order: Order) -> bool:
    """Whether the order is on a statement already paid: its fee is then fixed."""
    if order.shop_key_id is None or order.finished_at is None or order.status != "delivered":
        return False
    day = _aware(order.finished_at).astimezone(YEREVAN).date()
    return (
        ShopRemittance.select()
        .where(
            (ShopRemittance.company == order.company_id)
            & (ShopRemittance.shop_key_id == order.shop_key_id)
            & (ShopRemittance.period_start <= day)
            & (ShopRemittance.period_end > day)
        )
        .exists()
    )
