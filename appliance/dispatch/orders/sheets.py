"""The rows of an uploaded order file: CSV (UTF-8, comma, semicolon or tab separated) or an .xlsx
workbook's first sheet (read by calamine). Everything that makes a file unreadable as a whole is a
400 or 413 Problem naming the cause; what is wrong inside a row is the import's business
(importing.py).

Limits: MAX_BYTES per upload, MAX_ROWS rows under the header, MAX_CELL characters in a cell. A
workbook is also refused when it would unpack to more than MAX_UNPACKED bytes (a zip bomb) or when
a cell holds a formula (its value would be whatever the spreadsheet last computed, or nothing).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from python_calamine import CalamineError, CalamineWorkbook

from appliance.common.problems import BadRequest, PayloadTooLarge

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 10_000
MAX_CELL = 2_000
MAX_UNPACKED = 100 * 1024 * 1024

_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # .xls and other legacy Office files
# A cell whose first child is a formula: <c r="B5" t="str"><f>SUM(…)</f><v>…</v></c>
_FORMULA_CELL = re.compile(rb'<(?:\w+:)?c\b[^>]*?\br="([A-Z]{1,3}[0-9]{1,7})"[^>]*>\s*<(?:\w+:)?f\b')
_ANY_FORMULA = re.compile(rb"<(?:\w+:)?f\b")

Row = list[Any]


def too_many_rows() -> PayloadTooLarge:
    return PayloadTooLarge(f"At most {MAX_ROWS:,} orders per import: split the file.")


def read_rows(data: bytes) -> list[Row]:
    """Every row of the file, the header first; an .xlsx is told from CSV by its content."""
    if len(data) > MAX_BYTES:
        raise PayloadTooLarge(f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB: split it.")
    if data.startswith(_ZIP_MAGIC):
        rows = _xlsx_rows(data)
    elif data.startswith(_OLE_MAGIC):
        raise BadRequest("This is an old Excel (.xls) file: save it as .xlsx or CSV UTF-8.")
    else:
        rows = _csv_rows(data)
    if not rows or not any(_filled(cell) for cell in rows[0]):
        raise BadRequest("The file is empty: the first row must name the columns.")
    return rows


def _filled(cell: Any) -> bool:
    return cell is not None and str(cell).strip() != ""


def _csv_rows(data: bytes) -> list[Row]:
    if b"\x00" in data:
        raise BadRequest("The file is not text (it holds NUL bytes): send CSV UTF-8 or .xlsx.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequest(
            f"The file is not UTF-8 text (byte {exc.start}): save it as CSV UTF-8 or upload the .xlsx."
        ) from None
    first_line = text.split("\n", 1)[0]
    if len(first_line) > MAX_CELL * 50:
        raise BadRequest("The header row is too long to be a header: is this an order file?")
    delimiter = max((",", ";", "\t"), key=first_line.count)
    rows: list[Row] = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        for row in reader:
            if len(rows) > MAX_ROWS:
                raise too_many_rows()
            rows.append(row)
    except csv.Error as exc:
        raise BadRequest(f"Row {reader.line_num} cannot be read as CSV: {exc}.") from None
    _check_cells(rows)
    return rows


def _check_cells(rows: list[Row]) -> None:
    for number, row in enumerate(rows, start=1):
        for cell in row:
            if isinstance(cell, str) and len(cell) > MAX_CELL:
                raise BadRequest(f"Row {number} has a cell longer than {MAX_CELL} characters.")
            if isinstance(cell, str) and "\x00" in cell:  # refused in any text, as POST /orders does
                raise BadRequest(f"Row {number} has a cell with a NUL character.")


def _xlsx_rows(data: bytes) -> list[Row]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _check_archive(archive)
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    except (zipfile.BadZipFile, CalamineError, ValueError, OSError) as exc:
        raise BadRequest(f"The file cannot be read as .xlsx ({type(exc).__name__}).") from None
    try:
        if not book.sheet_names:
            raise BadRequest("The workbook has no sheet.")
        sheet = book.get_sheet_by_index(0)
        if sheet.total_height > MAX_ROWS + 1:
            raise too_many_rows()
        rows = list(_limited(sheet.iter_rows()))
    except CalamineError as exc:
        raise BadRequest(f"The file cannot be read as .xlsx ({type(exc).__name__}).") from None
    finally:
        book.close()
    _check_cells(rows)
    return rows


def _limited(rows: Iterator[Row]) -> Iterator[Row]:
    for count, row in enumerate(rows):
        if count > MAX_ROWS:
            raise too_many_rows()
        yield row


def _check_archive(archive: zipfile.ZipFile) -> None:
    """Refuse a workbook that unpacks to too much, or whose sheets hold formulas."""
    members = archive.infolist()
    if sum(member.file_size for member in members) > MAX_UNPACKED:
        raise PayloadTooLarge("The workbook unpacks to more than 100 MB: is it really a day's orders?")
    for member in members:
        if not (member.filename.startswith("xl/worksheets/") and member.filename.endswith(".xml")):
            continue
        xml = archive.read(member)
        if _ANY_FORMULA.search(xml):
            cell = _FORMULA_CELL.search(xml)
            where = f"cell {cell.group(1).decode()}" if cell else "a cell"
            raise BadRequest(
                f"{where[0].upper()}{where[1:]} holds a formula: paste values only (Paste Special → Values)."
            )
