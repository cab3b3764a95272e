"""GET /reports/{kind}.csv|.xlsx and GET /reports/summary: the day accounted, for dispatchers and
owners (docs/reports.md). Rows are read in pages while the answer streams, so memory stays flat."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, stream_with_context

from appliance.common.api import endpoint
from appliance.common.problems import Invalid
from appliance.dispatch.auth.guards import D, current_caller
from appliance.dispatch.reports import schemas, service, writers
from appliance.dispatch.words import language

bp = Blueprint("reports", __name__)

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _checked(query: schemas.RangeQuery) -> None:
    try:
        service.utc_bounds(query.start, query.end)
    except service.RangeError as exc:
        raise Invalid(str(exc), errors=[{"field": "to", "message": str(exc)}]) from None


def _download(
    chunks: Iterator[bytes], kind: str, query: schemas.RangeQuery, ext: str, mimetype: str
) -> Response:
    name = f"{kind}-{query.start.isoformat()}-{query.end.isoformat()}.{ext}"
    return Response(
        chunks,
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


# What every report route shares: who may call it, the range, its Problem.
_RANGE: dict[str, Any] = {
    "guard": D,
    "query": schemas.RangeQuery,
    "errors": (422,),
    "error_notes": {422: "an empty, reversed or longer than 366 days range"},
    "tags": ["Reports"],
}


@endpoint(
    bp,
    "GET",
    "/reports/<kind>.csv",
    path=schemas.ReportPath,
    **_RANGE,
    response_content_type="text/csv",
    response_description="text/csv (UTF-8 with a byte-order mark, so Excel keeps Armenian intact), "
    "streamed; the columns are listed in docs/reports.md. A text cell starting with = + - @, tab or CR "
    "gets a leading ' so that a spreadsheet shows it as text (formula injection); numbers are unchanged",
)
def report_csv(kind: str, query: schemas.RangeQuery):
    """One report (orders, cash or couriers) for the Yerevan days [from, to), as CSV."""
    _checked(query)
    header, rows = service.report(kind, current_caller().company_id, query.start, query.end)
    return _download(stream_with_context(writers.csv_chunks(header, rows)), kind, query, "csv", "text/csv")


@endpoint(
    bp,
    "GET",
    "/reports/<kind>.xlsx",
    path=schemas.ReportPath,
    **_RANGE,
    response_content_type=XLSX,
    response_description="an .xlsx workbook of one sheet for people: headers, statuses and failure "
    "reasons in the caller's language (hy, ru, en: the signed-in user's), date-times as date cells "
    "(Yerevan time) and amounts as numbers, each in the language's one format; the columns are "
    "listed in docs/reports.md. Text cells are typed text, never formulas",
)
def report_xlsx(kind: str, query: schemas.RangeQuery):
    """One report for the Yerevan days [from, to), as an .xlsx workbook."""
    _checked(query)
    header, rows = service.report(kind, current_caller().company_id, query.start, query.end)
    # A workbook is a zip: written (in openpyxl's write-only mode) to a spooled file that moves to
    # disk past 8 MB, then sent in chunks, so a year's orders never sit in memory.
    spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 (closed by chunks())
    writers.write_xlsx(spool, kind, header, rows, language.of_request())  # type: ignore[arg-type]
    spool.seek(0)

    def chunks() -> Iterator[bytes]:
        with spool:
            while chunk := spool.read(64 << 10):
                yield chunk

    return _download(chunks(), kind, query, "xlsx", XLSX)


@endpoint(
    bp,
    "GET",
    "/reports/summary",
    response=schemas.ReportSummary,
    **_RANGE,
)
def report_summary(query: schemas.RangeQuery):
    """Courier work for the Yerevan days [from, to): deliveries, failures by reason, on-time rate."""
    _checked(query)
    figures = service.courier_figures(current_caller().company_id, query.start, query.end)
    deliveries = sum(f.deliveries for f in figures)
    with_window = sum(f.delivered_with_window for f in figures)
    on_time = sum(f.on_time for f in figures)
    return {
        "from": query.start.isoformat(),
        "to": query.end.isoformat(),
        "deliveries": deliveries,
        "failures": sum(f.failures for f in figures),
        "onTimeRate": round(on_time / with_window, 4) if with_window else None,
        "couriers": [f.as_dict() for f in figures],
    }
