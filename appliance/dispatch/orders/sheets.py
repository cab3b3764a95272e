"""The rows of an uploaded order file: CSV (UTF-8, comma, semicolon or tab separated) or an .xlsx
workbook's first sheet (read by calamine in a child process: workbook_process.py). Everything that
makes a file unreadable as a whole is a 400 or 413 Problem naming the cause; what is wrong inside a
row is the import's business (importing.py).

Limits: MAX_BYTES per upload, MAX_ROWS rows under the header, MAX_CELL characters in a cell. A
workbook is also refused when it really unpacks to more than MAX_UNPACKED bytes (a zip bomb:
counted by inflating, not from the sizes the zip declares), when its first sheet declares a range
larger than MAX_ROWS rows of MAX_COLUMNS columns, when its values span more columns than that, or
when a cell holds a formula (its value would be whatever the spreadsheet last computed, or
nothing). A workbook that needs more memory or time than the child may take is a 413 (issue 41: a
1.5 KB file with cells A1 and XFD1048576 made calamine ask for 512 GB and abort the process).
"""

from __future__ import annotations

import csv
import io
import re
import struct
import zipfile
import zlib
from typing import Any
from xml.etree import ElementTree

from appliance.common.problems import ApiError, BadRequest, PayloadTooLarge
from appliance.dispatch.orders import workbook_process
from appliance.dispatch.orders.workbook_process import WorkbookRefused

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 10_000
MAX_COLUMNS = 256  # IV, the old .xls width; the import knows 24 columns
MAX_CELL = 2_000
MAX_UNPACKED = 100 * 1024 * 1024
MAX_PARTS = 1_000  # an .xlsx of orders has about ten

_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0"  # .xls and other legacy Office files
_WORKBOOK, _WORKBOOK_RELS = "xl/workbook.xml", "xl/_rels/workbook.xml.rels"
_KEEP_WHOLE = 1024 * 1024  # of the workbook's sheet list and relationships
_KEEP_HEAD = 64 * 1024  # of a worksheet: its <dimension> comes before its cells
_INFLATE_STEP = 256 * 1024
# A zip part's local header: signature, version, flags, method, time, date, CRC, sizes, lengths
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")
_CELL_REF = rb"[A-Z$]{1,4}[0-9$]{1,8}"
_DIMENSION = re.compile(rb'<(?:\w+:)?dimension\b[^>]*?\bref="(' + _CELL_REF + rb"(?::" + _CELL_REF + rb')?)"')
_CELL_POSITION = re.compile(r"([A-Z]{1,3})([0-9]{1,7})")
_CELL_NAME = re.compile(r"[A-Z]{1,3}[0-9]{1,7}")
_ERROR_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,59}")

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
    """The workbook checked here (real sizes, declared range), then read by a child process."""
    _check_archive(data)
    try:
        rows = workbook_process.read_rows(
            data, max_bytes=MAX_BYTES, max_rows=MAX_ROWS, max_columns=MAX_COLUMNS
        )
    except WorkbookRefused as exc:
        raise _refusal(exc) from None
    _check_cells(rows)
    return rows


def _refusal(exc: WorkbookRefused) -> ApiError:
    """The Problem of a child's refusal: the words are these (a child only names the reason)."""
    if exc.reason == "formula":
        cell = exc.facts.get("cell")
        where = f"Cell {cell}" if isinstance(cell, str) and _CELL_NAME.fullmatch(cell) else "A cell"
        return BadRequest(f"{where} holds a formula: paste values only (Paste Special → Values).")
    if exc.reason == "no_sheet":
        return BadRequest("The workbook has no sheet.")
    if exc.reason == "too_many_rows":
        return too_many_rows()
    if exc.reason == "too_many_columns":
        return PayloadTooLarge(f"At most {MAX_COLUMNS} columns per import: is this an order file?")
    if exc.reason == "memory":
        return PayloadTooLarge(
            "The workbook needs more memory to read than an import may use: is it really a day's orders?"
        )
    if exc.reason == "time":
        return PayloadTooLarge("The workbook takes too long to read: is it really a day's orders?")
    if exc.reason == "answer":
        return PayloadTooLarge("The workbook's cells hold more text than an import may: split it.")
    error = exc.facts.get("error")
    name = error if isinstance(error, str) and _ERROR_NAME.fullmatch(error) else "Error"
    return BadRequest(f"The file cannot be read as .xlsx ({name}).")


def _check_archive(data: bytes) -> None:
    """Refuse, before any reader starts, a workbook that unpacks to too much (counted by inflating
    every part, since a zip's directory may declare any sizes) or whose first sheet declares a
    range no import could read (cells A1:XFD1048576 made calamine ask for 512 GB)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise BadRequest(f"The file cannot be read as .xlsx ({type(exc).__name__}).") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_PARTS:
            raise BadRequest(f"The file cannot be read as .xlsx (it holds {len(members):,} parts).")
        if sum(member.file_size for member in members) > MAX_UNPACKED:
            raise _unpacks_too_much()
        kept = _inflate_all(data, members)
    _check_declared_range(kept)


def _unpacks_too_much() -> PayloadTooLarge:
    return PayloadTooLarge(
        f"The workbook unpacks to more than {MAX_UNPACKED // (1024 * 1024)} MB: is it really a day's orders?"
    )


def _inflate_all(data: bytes, members: list[zipfile.ZipInfo]) -> dict[str, bytes]:
    """Inflate every part with a cap on the bytes really produced; a part whose real size is not
    the one declared is refused (no spreadsheet writes such a file). The workbook's sheet list,
    its relationships and each worksheet's first bytes are kept for _check_declared_range."""
    budget = MAX_UNPACKED
    kept: dict[str, bytes] = {}
    for member in members:
        keep = _KEEP_WHOLE if member.filename in (_WORKBOOK, _WORKBOOK_RELS) else 0
        if member.filename.startswith("xl/worksheets/") and member.filename.endswith(".xml"):
            keep = _KEEP_HEAD
        size, head = _inflate(data, member, budget, keep)
        if size != member.file_size:
            raise BadRequest("The file cannot be read as .xlsx (its parts are not the sizes it declares).")
        budget -= size
        if keep:
            kept[member.filename] = head
    return kept


def _inflate(data: bytes, member: zipfile.ZipInfo, budget: int, keep: int) -> tuple[int, bytes]:
    """(bytes the part really inflates to, its first ``keep`` bytes); 413 past ``budget``."""
    unreadable = BadRequest(f"The file cannot be read as .xlsx (part {member.filename[:100]!r}).")
    start = _data_start(data, member)
    if start is None or member.flag_bits & 0x1:  # no local header there, or encrypted
        raise unreadable
    if member.compress_type == zipfile.ZIP_STORED:
        if start + member.compress_size > len(data):
            raise unreadable
        if member.compress_size > budget:
            raise _unpacks_too_much()
        return member.compress_size, data[start : start + min(keep, member.compress_size)]
    if member.compress_type != zipfile.ZIP_DEFLATED:
        raise unreadable
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    source = memoryview(data)[start:]
    taken, size, head = 0, 0, b""
    try:
        while not inflater.eof:
            if inflater.unconsumed_tail:
                piece = inflater.decompress(inflater.unconsumed_tail, _INFLATE_STEP)
            elif taken < len(source):
                piece = inflater.decompress(source[taken : taken + _INFLATE_STEP], _INFLATE_STEP)
                taken += _INFLATE_STEP
            else:
                raise unreadable  # the data ends inside the part
            size += len(piece)
            if size > budget:
                raise _unpacks_too_much()
            if len(head) < keep:
                head += piece[: keep - len(head)]
    except zlib.error:
        raise unreadable from None
    return size, head


def _data_start(data: bytes, member: zipfile.ZipInfo) -> int | None:
    """Where the part's compressed bytes begin: after its local header, whose name and extra
    field lengths may differ from the directory's (the directory only says where it is)."""
    offset = member.header_offset
    header = data[offset : offset + _LOCAL_HEADER.size]
    if len(header) < _LOCAL_HEADER.size or not header.startswith(_ZIP_MAGIC):
        return None
    *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    return offset + _LOCAL_HEADER.size + name_length + extra_length


def _check_declared_range(kept: dict[str, bytes]) -> None:
    """The first sheet's declared range (<dimension ref="A1:G2001"/>, which Excel widens over
    formatted empty cells too) may span at most the rows and columns an import reads: the reader
    builds the range of the cells that hold values, which the child checks exactly."""
    sheet = _first_sheet_part(kept)
    if sheet is None or sheet not in kept:
        return
    found = _DIMENSION.search(kept[sheet])
    if found is None:
        return
    first, _, last = found.group(1).decode().partition(":")
    top_left, bottom_right = _cell_position(first), _cell_position(last or first)
    if top_left is None or bottom_right is None:
        return
    rows = bottom_right[0]  # every row above the range is read too (as empty rows)
    columns = bottom_right[1] - top_left[1] + 1
    if rows * columns > (MAX_ROWS + 1) * MAX_COLUMNS:
        raise PayloadTooLarge(
            f"The first sheet's range {found.group(1).decode()} is larger than an import reads "
            f"(at most {MAX_ROWS:,} orders per import, {MAX_COLUMNS} columns): delete the empty "
            "rows and columns around the orders, or split the file."
        )


def _first_sheet_part(kept: dict[str, bytes]) -> str | None:
    """The part of the workbook's first sheet, as calamine finds it (xl/workbook.xml's first
    <sheet>, through xl/_rels/workbook.xml.rels); None when that cannot be told."""
    try:
        workbook = ElementTree.fromstring(kept.get(_WORKBOOK, b""))
        relationships = ElementTree.fromstring(kept.get(_WORKBOOK_RELS, b""))
    except ElementTree.ParseError:
        return None
    sheet = next((e for e in workbook.iter() if _local(e.tag) == "sheet"), None)
    if sheet is None:
        return None
    rid = next((v for k, v in sheet.attrib.items() if _local(k) == "id"), None)
    for relationship in relationships.iter():
        if _local(relationship.tag) == "Relationship" and relationship.get("Id") == rid:
            target = relationship.get("Target") or ""
            if target.startswith("/"):
                return target[1:]
            return target if target.startswith("xl/") else f"xl/{target}"
    return None


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _cell_position(name: str) -> tuple[int, int] | None:
    """(row, column), both from 1, of a cell name such as XFD1048576."""
    found = _CELL_POSITION.fullmatch(name.replace("$", ""))
    if found is None:
        return None
    column = 0
    for letter in found.group(1):
        column = column * 26 + ord(letter) - ord("A") + 1
    return int(found.group(2)), column
