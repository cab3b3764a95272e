"""CSV (UTF-8 with a BOM, so Excel reads Armenian intact) and .xlsx (openpyxl write-only: rows go
to the file as they come) for report rows. Text cells are never formulas (appliance/common/cells.py):
the CSV neutralises text a spreadsheet would run, the workbook writes text cells as text."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from appliance.common import cells


def csv_chunks(header: Iterable[str], rows: Iterable[list[object]]) -> Iterator[bytes]:
    """The CSV file as byte chunks (a few hundred rows each) for streaming or writing."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    buf.write("\ufeff")
    writer.writerow(header)
    for n, row in enumerate(rows, 1):
        writer.writerow(cells.csv_row(row))  # report rows: every str cell is text
        if n % 200 == 0:
            yield buf.getvalue().encode("utf-8")
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue().encode("utf-8")


def write_xlsx(out: BinaryIO, title: str, header: Iterable[str], rows: Iterable[list[object]]) -> int:
    """Writes the workbook to ``out``; returns the number of rows (header not counted)."""
    # Only the exports need openpyxl: imported here, not when the service starts.
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    book = Workbook(write_only=True)
    sheet = book.create_sheet(title)

    def cell(value: object) -> object:
        """``value`` as it goes into the sheet. openpyxl makes a string starting with ``=`` a
        formula and ``#N/A`` an error: such text is given as a cell typed text (its value
        unchanged). XML cannot hold most C0 control characters (openpyxl refused the whole
        workbook, a 500 for the range): they are dropped."""
        if not isinstance(value, str):
            return value
        text = ILLEGAL_CHARACTERS_RE.sub("", value) if ILLEGAL_CHARACTERS_RE.search(value) else value
        if not (cells.starts_like_a_formula(text) or text.startswith("#")):
            return text
        typed = WriteOnlyCell(sheet, text)
        typed.data_type = "s"
        typed.quotePrefix = True  # Excel keeps it text when the cell is edited
        return typed

    sheet.append(list(header))
    count = 0
    for row in rows:
        sheet.append([cell(value) for value in row])
        count += 1
    book.save(out)
    return count
