"""CSV (UTF-8 with a BOM, so Excel reads Armenian intact) and .xlsx (openpyxl write-only: rows go
to the file as they come) for report rows. Text cells are never formulas (appliance/common/cells.py):
the CSV neutralises text a spreadsheet would run, the workbook writes text cells as text."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from appliance.common import cells
from appliance.dispatch.words import numbers, report_texts


def csv_chunks(header: Iterable[str], rows: Iterable[list[object]]) -> Iterator[bytes]:
    """The CSV file as byte chunks (a few hundred rows each) for streaming or writing."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    buf.write("\ufeff")
    writer.writerow(header)
    for n, row in enumerate(rows, 1):
        # Report rows: every str cell is text; a date-time is Yerevan wall time to the second.
        writer.writerow(cells.csv_row([_csv_moment(v) if isinstance(v, dt.datetime) else v for v in row]))
        if n % 200 == 0:
            yield buf.getvalue().encode("utf-8")
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue().encode("utf-8")


def _csv_moment(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


def write_xlsx(
    out: BinaryIO, title: str, header: Iterable[str], rows: Iterable[list[object]], lang: str = "en"
) -> int:
    """Writes the workbook to ``out`` for people reading ``lang``: headers and coded values
    (statuses, failure reasons) in the language, date-times as date cells and amounts (columns
    ``*_amd``) as numbers, each in the language's one format (words/numbers.py). Returns the
    number of rows (header not counted)."""
    # Only the exports need openpyxl: imported here, not when the service starts.
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    book = Workbook(write_only=True)
    sheet = book.create_sheet(title)
    columns = list(header)
    formats = [_format(column, lang) for column in columns]

    def cell(value: object, number_format: str | None) -> object:
        """``value`` as it goes into the sheet. openpyxl makes a string starting with ``=`` a
        formula and ``#N/A`` an error: such text is given as a cell typed text (its value
        unchanged). XML cannot hold most C0 control characters (openpyxl refused the whole
        workbook, a 500 for the range): they are dropped."""
        if not isinstance(value, str):
            if number_format is None or value is None or isinstance(value, bool):
                return value
            typed = WriteOnlyCell(sheet, value)
            typed.number_format = number_format
            return typed
        text = ILLEGAL_CHARACTERS_RE.sub("", value) if ILLEGAL_CHARACTERS_RE.search(value) else value
        if not (cells.starts_like_a_formula(text) or text.startswith("#")):
            return text
        typed = WriteOnlyCell(sheet, text)
        typed.data_type = "s"
        typed.quotePrefix = True  # Excel keeps it text when the cell is edited
        return typed

    sheet.append([report_texts.header(column, lang) for column in columns])
    count = 0
    for row in rows:
        sheet.append(
            [
                cell(report_texts.value(column, value, lang), number_format)
                for column, value, number_format in zip(columns, row, formats, strict=True)
            ]
        )
        count += 1
    book.save(out)
    return count


def _format(column: str, lang: str) -> str | None:
    if column.endswith("_amd"):
        return numbers.AMOUNT_FORMATS[lang]
    if column.endswith("_at") or column in ("window_start", "window_end"):
        return numbers.DATE_TIME_FORMATS[lang]
    if column.endswith("_rate"):
        return numbers.RATE_FORMAT
    if column.endswith("_minutes"):
        return numbers.MINUTES_FORMAT
    return None
