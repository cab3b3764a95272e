"""Import a day's orders from a file (POST /orders/import, `appliance orders import`).

Each row is turned into the body of POST /orders and goes through the same schema (OrderCreate,
validated from JSON exactly as a request body), the same rules (service.check_order) and the same
insert (service.insert_order): there is no second set of rules. Each row is all or nothing (a
savepoint of its own); every refused row is listed as {row, column, message}, rows counted as the
file shows them (the header is row 1). A row whose externalRef the company already has is
reported as existing and never created again, so importing the same file twice creates nothing
the second time. A dry run answers the same counts and writes nothing.

Cells are read as a person typed them (cells.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import orjson
from pydantic import ValidationError

from appliance.common.api import validation_error
from appliance.common.db import write_transaction
from appliance.common.problems import ApiError, BadRequest, Conflict
from appliance.dispatch.db import database
from appliance.dispatch.fees import service as fees
from appliance.dispatch.geocoding.search import Unplaced
from appliance.dispatch.models import Company, Order
from appliance.dispatch.orders import proof, service
from appliance.dispatch.orders.cells import CONVERT, TIME_ONLY, CellError, text
from appliance.dispatch.orders.schemas import OrderCreate
from appliance.dispatch.orders.sheets import Row, read_rows
from appliance.dispatch.orders.state import transition

# An address to its point and the apartment it names (lat, lon, apartment or None), or Unplaced
# with the reason (geocoding/search.py locate).
Geocoder = Callable[[str], tuple[float, float, str | None]]
# Where a draft that needs a pin waits when the company has no default depot: Republic Square.
STAND_IN = (40.1776, 44.5126)
PIN_NEEDED = "_pinNeeded"  # a row's private mark: kept as a draft needing a pin, and why

# Rows written per transaction: short enough that other writers wait little, long enough that a
# 2,000-row file is a handful of commits.
CHUNK = 250

# Column names: the create body's own, then Armenian and Russian ones (compared without case,
# spaces, dots, dashes or underscores).
_ALIASES: dict[str, tuple[str, ...]] = {
    "externalRef": ("externalRef", "orderNumber", "Պատվերի համար", "Պատվեր", "Номер заказа", "Заказ"),
    "recipientName": ("recipientName", "Ստացող", "Ստացողի անուն", "Получатель", "Имя получателя"),
    "recipientPhone": ("recipientPhone", "phone", "Հեռախոս", "Ստացողի հեռախոս", "Телефон"),
    "amountAmd": ("amountAmd", "amount", "Գումար", "Сумма"),
    "otpRequired": ("otpRequired", "Հաստատման կոդ", "Код подтверждения"),
    "isCod": ("isCod", "cod", "Կանխիկ", "Наложенный платёж", "Наложенный платеж"),
    "codAmountAmd": ("codAmountAmd", "Կանխիկ գումար", "Сумма наложенного платежа"),
    "weightKg": ("weightKg", "weight", "Քաշ", "Вес"),
    "deliveryWindowStart": ("deliveryWindowStart", "Առաքել սկսած", "Доставка с"),
    "deliveryWindowEnd": ("deliveryWindowEnd", "Առաքել մինչև", "Доставка до"),
    "address": ("address", "Հասցե", "Адрес"),
    "addressLabelHy": ("addressLabelHy", "Հասցե հայերեն", "Адрес на армянском"),
    "addressLabelEn": ("addressLabelEn", "Հասցե անգլերեն", "Адрес на английском"),
    "addressLabelRu": ("addressLabelRu", "Հասցե ռուսերեն", "Адрес на русском"),
    "lat": ("lat", "latitude", "pin.lat", "Լայնություն", "Широта"),
    "lon": ("lon", "longitude", "lng", "pin.lon", "Երկայնություն", "Долгота"),
    "entrance": ("entrance", "addressDetails.entrance", "Մուտք", "Подъезд"),
    "floor": ("floor", "addressDetails.floor", "Հարկ", "Этаж"),
    "apartment": ("apartment", "addressDetails.apartment", "Բնակարան", "Квартира"),
    "intercom": ("intercom", "addressDetails.intercom", "Դոմոֆոն", "Домофон"),
    "noteToCourier": (
        "noteToCourier",
        "note",
        "Նշում առաքիչին",
        "Նշում",
        "Комментарий курьеру",
        "Комментарий",
    ),
}
# Issue 28: messages to the recipient.
_ALIASES["recipientLanguage"] = (
    "recipientLanguage",
    "language",
    "Լեզու",
    "Ստացողի լեզու",
    "Язык",
    "Язык получателя",
)
_ALIASES["recipientEmail"] = (
    "recipientEmail",
    "email",
    "e-mail",
    "Էլ. փոստ",
    "Эл. почта",
    "Email получателя",
)
# Issue 46: a window in one cell, "14:00-16:00" (times alone are on the import's day, cells.py).
_ALIASES["deliveryWindow"] = (
    "deliveryWindow",
    "window",
    "Առաքման ժամ",
    "Առաքման ժամանակ",
    "Время доставки",
    "Интервал доставки",
)
# Issue 47: the proof the delivery needs (kind names; the company's setting when absent or empty).
_ALIASES["proofRequired"] = ("proofRequired", "proof", "Ապացույց", "Подтверждение")
# Issue 47: the fiscal receipt's lines in one cell ("name | quantity | price [| code]; …") and the
# shop's TIN for a receipt issued as its agent (docs/fiscal-receipts.md).
_ALIASES["items"] = ("items", "Ապրանքներ", "Товары")
_ALIASES["partnerTin"] = ("partnerTin", "ՀՎՀՀ", "Գործընկերոջ ՀՎՀՀ", "ИНН", "ИНН партнёра")
DOOR_PARTS = ("entrance", "floor", "apartment", "intercom")
_RANGE = re.compile(r"^\s*(?P<start>[^\s–—-][^–—]*?)\s*[-–—]\s*(?P<end>\d{1,2}[:.]\d{2})\s*$")


def _window_cells(cells: dict[str, Any]) -> None:
    """ "14:00-16:00" in the window column (or in the start column with no end) as its start and
    end cells, each read by cells.py."""
    for column in ("deliveryWindow", "deliveryWindowStart"):
        cell = cells.get(column)
        if not isinstance(cell, str):
            continue
        matched = _RANGE.match(cell)
        if matched and (column == "deliveryWindow" or "deliveryWindowEnd" not in cells):
            cells.pop(column)
            cells["deliveryWindowStart"] = matched.group("start")
            cells.setdefault("deliveryWindowEnd", matched.group("end"))
    if "deliveryWindow" in cells:  # one moment: the window starts then
        cells.setdefault("deliveryWindowStart", cells.pop("deliveryWindow"))
    start, end = cells.get("deliveryWindowStart"), cells.get("deliveryWindowEnd")
    if isinstance(end, str) and TIME_ONLY.match(end.strip()):
        # an end without a date is on its start's day ("26.11.2026 10:00" to "12:00")
        if isinstance(start, datetime):
            cells["deliveryWindowEnd"] = f"{start.date().isoformat()} {end.strip()}"
        elif isinstance(start, str) and " " in start.strip() and not TIME_ONLY.match(start.strip()):
            cells["deliveryWindowEnd"] = f"{start.strip().rsplit(' ', 1)[0]} {end.strip()}"


def _key(name: str) -> str:
    return re.sub(r"[\s._\-]", "", name).casefold()


_COLUMN_OF = {_key(alias): column for column, aliases in _ALIASES.items() for alias in aliases}


class RowRefused(Exception):
    """Every problem of one row, as (column, message)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems)
        self.problems = problems


@dataclasses.dataclass
class Outcome:
    created: int = 0
    existing: int = 0
    refused: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    order_ids: list[str] = dataclasses.field(default_factory=list)
    needs_pin: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    headers: dict[str, str] = dataclasses.field(default_factory=dict)  # column → the file's header

    def body(self) -> dict[str, Any]:
        refused = sorted(self.refused, key=lambda r: r["row"])
        return {
            "created": self.created,
            "existing": self.existing,
            "refused": refused,
            "orderIds": self.order_ids,
            "needsPin": sorted(self.needs_pin, key=lambda r: r["row"]),
        }

    def refuse(self, row: int, column: str | None, message: str) -> None:
        # header: the column as the file names it ("Հեռախոս"), for people; column stays the API's
        header = self.headers.get(column or "")
        if header is None and column in ("deliveryWindowStart", "deliveryWindowEnd"):
            header = self.headers.get("deliveryWindow")
        self.refused.append({"row": row, "column": column, "header": header, "message": message})

    def refuse_all(self, row: int, problems: list[tuple[str, str]]) -> None:
        for column, message in problems:
            self.refuse(row, column, message)


def import_file(
    company_id: int,
    actor_id: int | None,
    data: bytes,
    master_key: bytes,
    *,
    dry_run: bool = False,
    geocode: Geocoder | None = None,
    ready: bool = False,
    router: Any = None,
    shop_key_id: int | None = None,
) -> dict[str, Any]:
    """{created, existing, refused: [{row, column, message}], orderIds} of one file (CSV or .xlsx).

    orderIds: the orders the file names, created or existing, in the file's order (a dry run
    creates none, so it lists the existing ones only)."""
    rows = read_rows(data)
    stand_in = _stand_in(company_id)
    columns = header_columns(rows[0])
    outcome = Outcome()
    outcome.headers = {
        column: str(cell).strip() for column, cell in zip(columns, rows[0], strict=False) if column
    }
    bodies: list[tuple[int, dict[str, Any]]] = []
    first_row_of_ref: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell is not None and str(cell).strip() for cell in row):
            continue  # a blank line is not an order
        try:
            fields = row_fields(columns, row, geocode, stand_in)
        except RowRefused as exc:
            outcome.refuse_all(number, exc.problems)
            continue
        ref = fields.get("externalRef")
        if ref is not None:
            if ref in first_row_of_ref:
                outcome.refuse(
                    number, "externalRef", f"repeats the order number of row {first_row_of_ref[ref]}"
                )
                continue
            first_row_of_ref[ref] = number
        bodies.append((number, fields))
    existing = _existing_refs(company_id, first_row_of_ref)
    valid: list[tuple[int, dict[str, Any]]] = []
    pin_needed: dict[int, str] = {}
    for number, fields in bodies:
        ref = fields.get("externalRef")
        if ref is not None and ref in existing:
            outcome.existing += 1
            continue
        reason = fields.pop(PIN_NEEDED, None)
        try:
            valid.append((number, _validated(fields)))
        except RowRefused as exc:
            outcome.refuse_all(number, exc.problems)
            continue
        if reason is not None:
            pin_needed[number] = reason
    ids_by_row: dict[int, str] = {}
    for number, fields in bodies:
        ref = fields.get("externalRef")
        if ref is not None and ref in existing:
            ids_by_row[number] = str(existing[ref])
    if dry_run:
        outcome.created = len(valid)
    else:
        # Each row's delivery fee, worked out before any write (one road table for the file); a row
        # waiting for its pin gets none, its stand-in pin being no address.
        priced = [None if n in pin_needed else f for n, f in valid]
        quoted = fees.quote_many(company_id, priced, router) if router is not None else [None] * len(valid)
        fee_of = {n: fee for (n, _), fee in zip(valid, quoted, strict=True)}
        for chunk in _chunks(valid, CHUNK):
            _write(
                company_id, actor_id, chunk, master_key, outcome, ids_by_row, ready, pin_needed,
                fee_of, shop_key_id,
            )  # fmt: skip
    outcome.order_ids = [ids_by_row[n] for n in sorted(ids_by_row)]
    address_header = outcome.headers.get("address") or outcome.headers.get("addressLabelHy")
    outcome.needs_pin = [
        {"row": n, "orderId": ids_by_row.get(n), "header": address_header, "message": reason}
        for n, reason in pin_needed.items()
    ]
    return outcome.body()


def _stand_in(company_id: int) -> tuple[float, float]:
    from appliance.dispatch.models import Depot

    depot = Depot.get_or_none((Depot.company == company_id) & Depot.is_default)
    return (depot.lat, depot.lon) if depot is not None else STAND_IN


def header_columns(header: Row) -> list[str | None]:
    """The create-body field of each column of the header row (None for an empty column)."""
    columns: list[str | None] = []
    unknown: list[str] = []
    for cell in header:
        name = "" if cell is None else str(cell).strip()
        if not name:
            columns.append(None)
            continue
        column = _COLUMN_OF.get(_key(name))
        if column is None:
            unknown.append(name)
        elif column in columns:
            raise BadRequest(f"Row 1 names the column {name!r} twice ({column}).")
        columns.append(column)
    if unknown:
        known = ", ".join(_ALIASES)
        raise BadRequest(
            f"Row 1 has columns this import does not know: {', '.join(map(repr, unknown))}. "
            f"Known columns: {known} (or their Armenian or Russian names; see docs/orders.md).",
            errors=[{"field": name, "message": "unknown column"} for name in unknown],
        )
    missing = [name for name in ("recipientName", "recipientPhone") if name not in columns]
    if "addressLabelHy" not in columns and "address" not in columns:
        missing.append("addressLabelHy (or address)")
    if ("lat" in columns) != ("lon" in columns):
        missing.append("lon" if "lat" in columns else "lat")
    if missing:
        raise BadRequest(
            f"Row 1 lacks the columns {', '.join(missing)}.",
            errors=[{"field": name, "message": "missing column"} for name in missing],
        )
    return columns


def row_fields(
    columns: list[str | None],
    row: Row,
    geocode: Geocoder | None = None,
    stand_in: tuple[float, float] = STAND_IN,
) -> dict[str, Any]:
    """The POST /orders body of one row (cells converted, empty cells left out); RowRefused with
    every cell that cannot be read. A row with an address and no coordinates is placed by
    ``geocode`` (with the apartment the address names, "Abovyan 10, kv. 12", when the row has no
    apartment of its own); when it cannot be, the row is kept as a draft that needs a pin, at
    ``stand_in``, with the reason under PIN_NEEDED."""
    cells: dict[str, Any] = {}
    for column, cell in zip(columns, row, strict=False):
        if column is None or cell is None or (isinstance(cell, str) and not cell.strip()):
            continue
        cells[column] = cell
    _window_cells(cells)
    fields: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []

    def convert(column: str, cell: Any) -> Any:
        try:
            return CONVERT.get(column, text)(column, cell)
        except CellError as exc:
            problems.append((exc.column, exc.message))
            return None

    for column, cell in cells.items():
        if column not in ("lat", "lon", "address", *DOOR_PARTS):
            fields[column] = convert(column, cell)
    address = convert("address", cells["address"]) if "address" in cells else None
    placed_apartment = None
    if "lat" in cells or "lon" in cells:
        fields["pin"] = {"lat": convert("lat", cells.get("lat")), "lon": convert("lon", cells.get("lon"))}
    elif address is not None or fields.get("addressLabelHy"):
        try:  # the offline address index (geocoding/search.py)
            if geocode is None:
                raise Unplaced("no coordinates and no address index to place the address")
            lat, lon, placed_apartment = geocode(address or fields["addressLabelHy"])
            fields["pin"] = {"lat": lat, "lon": lon}
        except Unplaced as exc:
            # Kept, not refused (issue 46): a draft at the stand-in pin until one is dropped.
            fields["pin"] = {"lat": stand_in[0], "lon": stand_in[1]}
            fields[PIN_NEEDED] = str(exc)[:300]
    else:
        problems.append(("lat", "no coordinates: give lat and lon"))
    if "addressLabelHy" not in fields and address is not None:
        fields["addressLabelHy"] = address
    details = {part: convert(part, cells[part]) for part in DOOR_PARTS if part in cells}
    if placed_apartment and "apartment" not in details:
        details["apartment"] = placed_apartment
    if details:
        fields["addressDetails"] = details
    if problems:
        raise RowRefused(problems)
    return fields


def _validated(fields: dict[str, Any]) -> dict[str, Any]:
    """The row through POST /orders' own schema (from JSON, as a request body) and rules."""
    try:
        body = OrderCreate.model_validate_json(orjson.dumps(fields))
        dumped = body.model_dump()
        service.check_order(dumped)
    except ValidationError as exc:
        error = validation_error(exc)
        raise RowRefused(
            [(_column(e["field"]), e["message"]) for e in error.errors or []] or [("row", error.detail)]
        ) from None
    except ApiError as exc:
        raise RowRefused(
            [(_column(e.get("field")), e.get("message") or exc.detail) for e in exc.errors or []]
            or [("row", exc.detail)]
        ) from None
    return dumped


def _column(field: str | None) -> str:
    """The file's column of a body field: pin.lat is lat, addressDetails.floor is floor."""
    if not field:
        return "row"
    return field.rsplit(".", 1)[-1] if field.startswith(("pin.", "addressDetails.")) else field


def _write(
    company_id: int,
    actor_id: int | None,
    chunk: list[tuple[int, dict[str, Any]]],
    master_key: bytes,
    outcome: Outcome,
    ids_by_row: dict[int, str],
    ready: bool,
    pin_needed: dict[int, str],
    fee_of: dict[int, int | None],
    shop_key_id: int | None,
) -> None:
    with write_transaction(database):
        # A shop's key importing its orders: the key's proof default for rows that name none.
        default = service.key_proof_default(company_id, shop_key_id)
        company_proof = proof.kinds_of(Company.get_by_id(company_id).proof_required)
        for number, fields in chunk:
            if default is not None and fields.get("proofRequired") is None:
                fields = {**fields, "proofRequired": default}
            try:  # the row is all or nothing: only its INSERT can fail, under its own savepoint
                order = service.insert_order(
                    company_id,
                    actor_id,
                    fields,
                    master_key,
                    pin_needed=pin_needed.get(number),
                    company_proof=company_proof,
                    delivery_fee=fee_of.get(number),
                    shop_key_id=shop_key_id,
                )
            except Conflict as exc:
                if exc.code != "external_ref_taken":
                    raise
                # Another import or request created it meanwhile: it exists, it is not repeated.
                outcome.existing += 1
                found = _existing_refs(company_id, {fields["externalRef"]: number})
                if fields["externalRef"] in found:
                    ids_by_row[number] = str(found[fields["externalRef"]])
                continue
            if ready and number not in pin_needed:  # its pin and phone (POST /orders' rules): ready
                transition(order, "ready", actor_id, by="dispatcher", reason="imported ready")
            outcome.created += 1
            ids_by_row[number] = str(order.id)


def _existing_refs(company_id: int, refs: Iterable[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in _chunks(list(refs), 500):
        query = Order.select(Order.external_ref, Order.id).where(
            (Order.company == company_id) & Order.external_ref.in_(chunk)
        )
        found.update(dict(query.tuples()))
    return found


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
