"""CSV (UTF-8 with a BOM, so Excel reads Armenian intact) and .xlsx (openpyxl write-only: rows go
to the file as they come) for report rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import BinaryIO


def csv_chunks(header: Iterable[str], rows: Iterable[list[object]]) -> Iterator[bytes]:
    """The CSV file as byte chunks (a few hundred rows each) for streaming or writing."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    buf.write("\ufeff")
    writer.writerow(header)
    for n, row in enumerate(rows, 1):
        writer.writerow(row)
        if n % 200 == 0:
            yield buf.getvalue().encode("utf-8")
            buf.seek(0)
            buf.truncate()
    yield buf.getvalue().encode("utf-8")


def write_xlsx(out: BinaryIO, title: str, header: Iterable[str], rows: Iterable[list[object]]) -> int:
    """Writes the workbook to ``out``; returns the number of rows (header not counted)."""
    from openpyxl import Workbook  # only the exports need it

    book = Workbook(write_only=True)
    sheet = book.create_sheet(title)
    sheet.append(list(header))
    count = 0
    for row in rows:
        sheet.append(row)
        count += 1
    book.save(out)
    return count
