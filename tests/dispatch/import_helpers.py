"""Order files for the import tests: CSV text and real .xlsx workbooks (written by openpyxl)."""

from __future__ import annotations

import csv
import io
import zipfile
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


# Hand-written workbooks (issue 41): what no spreadsheet writes, a few parts of XML in a zip.
_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>"
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Orders" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'sharedStrings" Target="sharedStrings.xml"/></Relationships>'
)
SHEET_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def handmade_xlsx(sheet_data: str, *, dimension: str | None = None, shared: list[str] | None = None) -> bytes:
    """A workbook of one sheet whose <sheetData> is ``sheet_data``."""
    head = f'<dimension ref="{dimension}"/>' if dimension else ""
    strings = "".join(f"<si><t>{text}</t></si>" for text in shared or [])
    parts = {
        "[Content_Types].xml": _CONTENT_TYPES,
        "_rels/.rels": _RELS,
        "xl/workbook.xml": _WORKBOOK,
        "xl/_rels/workbook.xml.rels": _WORKBOOK_RELS,
        "xl/sharedStrings.xml": f'<sst xmlns="{SHEET_NS}" count="{len(shared or [])}">{strings}</sst>',
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{SHEET_NS}">{head}<sheetData>{sheet_data}</sheetData></worksheet>'
        ),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def far_apart_xlsx(*, dimension: bool = True) -> bytes:
    """The pen test's 1.5 KB workbook: cells A1 and XFD1048576, the sheet's first and last."""
    cells = (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>recipientName</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>'
    )
    return handmade_xlsx(cells, dimension="A1:XFD1048576" if dimension else None)


def repeated_ods(rows: int, columns: int) -> bytes:
    """An OpenDocument spreadsheet (calamine reads those too, told by their content) of one cell
    repeated ``columns`` times in a row repeated ``rows`` times: under a kilobyte."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="Orders">'
        f'<table:table-row table:number-rows-repeated="{rows}"><table:table-cell office:value-type="string" '
        f'table:number-columns-repeated="{columns}"><text:p>x</text:p></table:table-cell></table:table-row>'
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
        '<manifest:file-entry manifest:full-path="/" '
        'manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet", zipfile.ZIP_STORED)
        archive.writestr("META-INF/manifest.xml", manifest)
        archive.writestr("content.xml", content)
    return out.getvalue()
