"""One cell of an imported order file, read as a person typed it: phone numbers in any usual form
(Armenia by default) become E.164, amounts are whole AMD ("5 000" and "5000.00" too), decimals may
use a comma, yes/no in English, Armenian or Russian, delivery windows in Yerevan time unless they
carry an offset; a time alone ("14:00", or a spreadsheet's time cell) is on the import's day in
Yerevan. A cell that cannot be read raises CellError naming its column."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from typing import Any

import phonenumbers

from appliance.common import clock

DEFAULT_REGION = "AM"
_TRUE = {"true", "yes", "y", "1", "այո", "да", "x", "✓"}
_FALSE = {"false", "no", "n", "0", "ոչ", "нет"}
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009'’_]")
_DATE_FORMATS = ("%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S",
                 "%d.%m.%Y %H:%M", "%d.%m.%Y %H:%M:%S", "%d/%m/%Y %H:%M")  # fmt: skip


class CellError(Exception):
    """What is wrong with one cell."""

    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column, self.message = column, message


def text(column: str, cell: Any) -> str:
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))  # a spreadsheet's number typed as text (an order number, a floor)
    if isinstance(cell, datetime | date | time):
        raise CellError(column, "expected text, found a date")
    return str(cell).strip()


def _number(column: str, cell: Any) -> float:
    if cell is None:
        raise CellError(column, "required with the other coordinate")
    if isinstance(cell, bool):
        raise CellError(column, "expected a number")
    if isinstance(cell, int | float):
        return float(cell)
    text = _SPACES.sub("", str(cell)).replace(",", ".")
    try:
        return float(text)
    except ValueError:
        raise CellError(column, f"expected a number, found {str(cell)[:40]!r}") from None


def _amount(column: str, cell: Any) -> int:
    """Whole AMD: 5000, "5 000", "5,000", "5000.00"; a fraction of a dram is refused."""
    if isinstance(cell, bool):
        raise CellError(column, "expected a whole amount in AMD")
    if isinstance(cell, int):
        return cell
    if isinstance(cell, float):
        if not cell.is_integer():
            raise CellError(column, "expected a whole amount in AMD (no fractions of a dram)")
        return int(cell)
    text = _SPACES.sub("", str(cell)).removesuffix("֏").removesuffix("AMD").removesuffix("драм")
    match = re.fullmatch(r"(-?[0-9]{1,3}(?:,[0-9]{3})+|-?[0-9]+)(?:[.,]0{1,2})?", text)
    if match is None:
        raise CellError(column, f"expected a whole amount in AMD, found {str(cell)[:40]!r}")
    return int(match.group(1).replace(",", ""))


def _flag(column: str, cell: Any) -> bool:
    if isinstance(cell, bool):
        return cell
    if isinstance(cell, int | float) and cell in (0, 1):
        return bool(cell)
    text = str(cell).strip().casefold()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise CellError(column, f"expected yes or no, found {str(cell)[:40]!r}")


def _phone(column: str, cell: Any) -> str:
    """E.164; a number without its country code is taken as Armenian."""
    text = str(int(cell)) if isinstance(cell, float) and cell.is_integer() else str(cell).strip()
    if isinstance(cell, int | float) and not text.startswith("0") and len(text) > 9:
        text = "+" + text  # a spreadsheet dropped the leading + of 37491123456
    try:
        number = phonenumbers.parse(text, DEFAULT_REGION)
    except phonenumbers.NumberParseException:
        raise CellError(column, f"not a phone number: {text[:40]!r}") from None
    if not phonenumbers.is_valid_number(number):
        raise CellError(column, f"not a valid phone number: {text[:40]!r}")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


TIME_ONLY = re.compile(r"^\d{1,2}[:.]\d{2}(?::\d{2})?$")


def import_day() -> date:
    """The day a time without a date is on: the import's own, in Yerevan."""
    return clock.now().astimezone(clock.YEREVAN).date()


def _moment(column: str, cell: Any) -> str:
    """An RFC 3339 date-time: with an offset as given, without one in Yerevan time; a time alone
    on the import's day."""
    if isinstance(cell, datetime):
        value = cell
    elif isinstance(cell, time):  # a spreadsheet cell formatted as a time
        value = datetime.combine(import_day(), cell)
    elif isinstance(cell, date | int | float):
        raise CellError(column, "expected a date and a time, such as 2026-11-26 10:00")
    else:
        text = str(cell).strip()
        if ":" not in text and not TIME_ONLY.match(text):
            raise CellError(
                column, f"expected a date and a time, such as 2026-11-26 10:00, found {text[:40]!r}"
            )
        if TIME_ONLY.match(text):
            hour, minute = (int(part) for part in re.split(r"[:.]", text)[:2])
            if hour > 23 or minute > 59:
                raise CellError(column, f"not a time of day: {text!r}")
            value = datetime.combine(import_day(), time(hour, minute))
        else:
            value = _parse_moment(column, text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=clock.YEREVAN)
    return value.isoformat()


def _parse_moment(column: str, text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    for pattern in _DATE_FORMATS:
        try:
            return datetime.strptime(text, pattern)
        except ValueError:
            continue
    raise CellError(column, f"expected a date and a time, such as 2026-11-26 10:00, found {text[:40]!r}")


# The recipient's language as a shop's file may name it: a code or the language's own name.
_LANGUAGE_NAMES = {"հայերեն": "hy", "armenian": "hy", "русский": "ru", "russian": "ru", "english": "en"}


def _language(column: str, cell: Any) -> str:
    value = text(column, cell).casefold()
    return _LANGUAGE_NAMES.get(value, value)  # anything else is refused by the order's schema


def _kinds(column: str, cell: Any) -> list[str]:
    """The proof a row's delivery needs: kind names separated by commas, semicolons or spaces
    ("photo, signature"); an unknown name is refused by the order's schema."""
    return [part for part in re.split(r"[\s,;]+", text(column, cell).casefold()) if part]


def _items(column: str, cell: Any) -> list[dict[str, Any]]:
    """The fiscal receipt's lines in one cell (docs/fiscal-receipts.md): lines split by ";", each
    "name | quantity | price in AMD" with an optional "| classification code"; the order's schema
    checks each part's range."""
    lines = []
    for line in text(column, cell).split(";"):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) not in (3, 4):
            raise CellError(column, "expected name | quantity | price [| code] per line, lines split by ;")
        item: dict[str, Any] = {
            "name": parts[0],
            "quantity": parts[1].replace(",", "."),
            "priceAmd": _amount(column, parts[2]),
        }
        if len(parts) == 4 and parts[3]:
            item["adgCode"] = parts[3]
        lines.append(item)
    return lines


def _tin(column: str, cell: Any) -> str:
    """A TIN typed as a number loses its leading zeros in a spreadsheet: eight digits again."""
    value = text(column, cell)
    return value.zfill(8) if value.isdigit() and len(value) < 8 else value


CONVERT = {
    "proofRequired": _kinds,
    "items": _items,
    "partnerTin": _tin,
    "recipientLanguage": _language,
    "recipientPhone": _phone,
    "amountAmd": _amount,
    "codAmountAmd": _amount,
    "weightKg": _number,
    "lat": _number,
    "lon": _number,
    "otpRequired": _flag,
    "isCod": _flag,
    "deliveryWindowStart": _moment,
    "deliveryWindowEnd": _moment,
}
