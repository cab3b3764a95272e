"""Order files for the import tests: CSV text and real .xlsx workbooks (written by openpyxl)."""

from __future__ import annotations

import csv
import io
from typing import Any

from openpyxl import Workbook

HEADER = ["externalRef", "recipientName", "recipientPhone", "amountAmd", "addressLabelHy", "lat", "lon"]


def row(n: int, **cells: Any) -> dict[str, Any]:
    base = {
        "externalRef": f"SHOP-{n}",
        "recipientName": f"Recipient {n}",
        "recipientPhone": f"091 {100000 + n}",
        "amountAmd": 1000 + n,
        "addressLabelHy": f"Աբովյան {n}",
        "lat": 40.18 + n / 100000,
        "lon": 44.51,
    }
    return base | cells


def csv_bytes(rows: list[dict[str, Any]], header: list[str] | None = None, delimiter: str = ",") -> bytes:
    names = header or list(dict.fromkeys(name for r in rows for name in r))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(names)
    for r in rows:
        writer.writerow(["" if r.get(name) is None else r.get(name) for name in names])
    return out.getvalue().encode()


def xlsx_bytes(rows: list[list[Any]]) -> bytes:
    book = Workbook()
    sheet = book.active
    for values in rows:
        sheet.append(values)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def post_csv(client, member, data: bytes, *, dry_run: bool = False, content_type: str = "text/csv"):
    url = "/orders/import" + ("?dryRun=true" if dry_run else "")
    return client.post(url, data=data, content_type=content_type, headers=member.headers)


def post_file(client, member, data: bytes, name: str = "orders.xlsx", *, dry_run: bool = False):
    url = "/orders/import" + ("?dryRun=true" if dry_run else "")
    return client.post(
        url,
        data={"file": (io.BytesIO(data), name)},
        content_type="multipart/form-data",
        headers=member.headers,
    )
