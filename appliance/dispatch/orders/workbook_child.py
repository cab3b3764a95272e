"""The child process that reads an uploaded .xlsx for sheets.py (issue 41): calamine (Rust) builds
a sheet's whole dense range before any row can be counted, and a failed allocation there aborts
the process that asked. So it asks in a short-lived process of its own, never in a serving one.

Run as ``appliance _read-workbook LIMITS`` (``python -m appliance _read-workbook LIMITS`` from a
source tree; appliance/__main__.py starts it without importing the CLI), the workbook on stdin.
It first caps its own address space, CPU time and files (it writes none, dumps no core), then
answers on stdout, one JSON value per line:

- a JSON array per row of the first sheet, the header first; cells are strings, numbers, booleans
  or, for dates and durations, ``{"datetime"|"date"|"time": ISO text}`` / ``{"timedelta": [days,
  seconds, microseconds]}``;
- then ``{"rows": N}``, or instead ``{"refused": REASON, ...}`` (REASONS) and nothing after it.

The parent (workbook_process.py) turns a refusal into its Problem: the words a person reads are
the parent's, so a child can only choose among them.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import re
import resource
import sys
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

COMMAND = "_read-workbook"

# What a child may answer instead of rows (the parent words each).
REASONS = frozenset({"unreadable", "formula", "no_sheet", "too_many_rows", "too_many_columns", "memory"})

# A cell whose first child is a formula: <c r="B5" t="str"><f>SUM(…)</f><v>…</v></c>
_FORMULA_CELL = re.compile(rb'<(?:\w+:)?c\b[^>]*?\br="([A-Z]{1,3}[0-9]{1,7})"[^>]*>\s*<(?:\w+:)?f\b')
_ANY_FORMULA = re.compile(rb"<(?:\w+:)?f\b")


@dataclasses.dataclass(frozen=True)
class Limits:
    max_bytes: int  # of the workbook read from stdin
    max_rows: int  # rows under the header
    max_columns: int
    memory_bytes: int  # the child's whole address space (RLIMIT_AS)
    cpu_seconds: int


class Refused(Exception):
    def __init__(self, reason: str, **facts: Any) -> None:
        super().__init__(reason)
        self.answer = {"refused": reason, **facts}


def main(argv: list[str]) -> None:
    limits = Limits(**json.loads(argv[0]))
    confine(limits)
    out = sys.stdout.buffer
    try:
        data = sys.stdin.buffer.read(limits.max_bytes + 1)
        count = 0
        for row in rows_of(data, limits):
            out.write(_line([_cell(value) for value in row]))
            count += 1
        out.write(_line({"rows": count}))
    except Refused as exc:
        out.write(_line(exc.answer))
    except MemoryError:  # Python's own allocations; calamine's abort the process (SIGABRT)
        out.write(_line({"refused": "memory"}))
    except BaseException as exc:  # a Rust panic is a BaseException (pyo3's PanicException)
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            raise
        out.write(_line({"refused": "unreadable", "error": type(exc).__name__}))
    out.flush()


def confine(limits: Limits) -> None:
    """Limits this process sets on itself before it reads a byte of the workbook."""
    for kind, value in (
        (resource.RLIMIT_AS, limits.memory_bytes),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_CORE, 0),  # a Rust abort leaves no core file of an untrusted workbook
        (resource.RLIMIT_FSIZE, 0),  # it writes no file (a pipe is no file)
        (resource.RLIMIT_NOFILE, 64),  # its three pipes and what an import opens
    ):
        _soft, hard = resource.getrlimit(kind)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (cap, cap))


def rows_of(data: bytes, limits: Limits) -> Iterator[list[Any]]:
    """The first sheet's rows, the header first; Refused when the workbook cannot be imported."""
    from python_calamine import CalamineError, CalamineWorkbook

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _refuse_formulas(archive)
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    except (zipfile.BadZipFile, zlib.error, CalamineError, ValueError, OSError) as exc:
        raise Refused("unreadable", error=type(exc).__name__) from None
    try:
        if not book.sheet_names:
            raise Refused("no_sheet")
        sheet = book.get_sheet_by_index(0)
        if sheet.total_height > limits.max_rows + 1:
            raise Refused("too_many_rows")
        if sheet.width > limits.max_columns:
            raise Refused("too_many_columns")
        for count, row in enumerate(sheet.iter_rows()):
            if count > limits.max_rows:
                raise Refused("too_many_rows")
            yield row
    except CalamineError as exc:
        raise Refused("unreadable", error=type(exc).__name__) from None
    finally:
        book.close()


def _refuse_formulas(archive: zipfile.ZipFile) -> None:
    """A formula's value would be whatever the spreadsheet last computed, or nothing."""
    for member in archive.infolist():
        if not (member.filename.startswith("xl/worksheets/") and member.filename.endswith(".xml")):
            continue
        xml = archive.read(member)
        if _ANY_FORMULA.search(xml):
            cell = _FORMULA_CELL.search(xml)
            raise Refused("formula", cell=cell.group(1).decode() if cell else None)


def _cell(value: Any) -> Any:
    """A cell as JSON: datetime before date (a datetime is a date)."""
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"time": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"timedelta": [value.days, value.seconds, value.microseconds]}
    return value


def decode_cell(value: Any) -> Any:
    """The parent's inverse of _cell."""
    if not isinstance(value, dict):
        return value
    if "datetime" in value:
        return datetime.datetime.fromisoformat(value["datetime"])
    if "date" in value:
        return datetime.date.fromisoformat(value["date"])
    if "time" in value:
        return datetime.time.fromisoformat(value["time"])
    days, seconds, microseconds = value["timedelta"]
    return datetime.timedelta(days=days, seconds=seconds, microseconds=microseconds)


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
