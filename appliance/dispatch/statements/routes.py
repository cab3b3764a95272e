"""Shop statements and remittances (docs/statements.md): dispatchers and owners read any shop's,
owners mark a period paid, a shop's integration key reads its own (GET /statements)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

from flask import Blueprint, Response, stream_with_context

from appliance.common.api import endpoint
from appliance.common.problems import Invalid
from appliance.dispatch.auth.guards import D, IntegrationCaller, K, O, current_actor, current_caller
from appliance.dispatch.reports import service as reports
from appliance.dispatch.reports import writers
from appliance.dispatch.reports.routes import XLSX
from appliance.dispatch.statements import page, schemas, service
from appliance.dispatch.words import language

bp = Blueprint("statements", __name__)
TAGS = ["Shop statements"]
RANGE_422 = {422: "an empty, reversed or longer than 366 days range"}


def _checked(start, end) -> None:  # type: ignore[no-untyped-def]
    try:
        reports.utc_bounds(start, end)
    except reports.RangeError as exc:
        raise Invalid(str(exc), errors=[{"field": "to", "message": str(exc)}]) from None


def _download(chunks: Iterator[bytes], name: str, mimetype: str) -> Response:
    return Response(
        chunks,
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


def _name(key_id: int, query: schemas.RangeQuery, ext: str) -> str:
    return f"statement-{key_id}-{query.start.isoformat()}-{query.end.isoformat()}.{ext}"


@endpoint(bp, "GET", "/shops", guard=D, response=schemas.ShopList, tags=TAGS)
def list_shops():
    """The company's shops: its integration keys, revoked ones included (their statements remain)."""
    return {"shops": service.shops(current_caller().company_id)}


@endpoint(
    bp,
    "GET",
    "/shops/<int:key_id>/statement",
    guard=D,
    query=schemas.RangeQuery,
    response=schemas.Statement,
    errors=(404, 422),
    error_notes=RANGE_422,
    tags=TAGS,
)
def shop_statement(key_id: int, query: schemas.RangeQuery):
    """A shop's statement for the Yerevan days [from, to): orders delivered and returned, cash
    collected, fees, net owed, whether the cash balances, and the paid periods it overlaps."""
    _checked(query.start, query.end)
    return service.statement(current_caller().company_id, key_id, query.start, query.end)


@endpoint(
    bp,
    "GET",
    "/shops/<int:key_id>/statement.csv",
    guard=D,
    query=schemas.RangeQuery,
    errors=(404, 422),
    error_notes=RANGE_422,
    response_content_type="text/csv",
    response_description="text/csv (UTF-8 with a byte-order mark): one row per order delivered or "
    "returned, then a total row; columns in docs/statements.md",
    tags=TAGS,
)
def shop_statement_csv(key_id: int, query: schemas.RangeQuery):
    """A shop's statement as CSV."""
    _checked(query.start, query.end)
    company_id = current_caller().company_id
    service.shop_key(company_id, key_id)
    rows = service.lines(company_id, key_id, query.start, query.end)
    return _download(
        stream_with_context(writers.csv_chunks(service.COLUMNS, rows)),
        _name(key_id, query, "csv"),
        "text/csv",
    )


@endpoint(
    bp,
    "GET",
    "/shops/<int:key_id>/statement.xlsx",
    guard=D,
    query=schemas.RangeQuery,
    errors=(404, 422),
    error_notes=RANGE_422,
    response_content_type=XLSX,
    response_description="an .xlsx workbook of the statement in the caller's language",
    tags=TAGS,
)
def shop_statement_xlsx(key_id: int, query: schemas.RangeQuery):
    """A shop's statement as an .xlsx workbook."""
    _checked(query.start, query.end)
    company_id = current_caller().company_id
    service.shop_key(company_id, key_id)
    rows = service.lines(company_id, key_id, query.start, query.end)
    spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115 (closed by chunks())
    writers.write_xlsx(spool, "statement", service.COLUMNS, rows, language.of_request())  # type: ignore[arg-type]
    spool.seek(0)

    def chunks() -> Iterator[bytes]:
        with spool:
            while chunk := spool.read(64 << 10):
                yield chunk

    return _download(chunks(), _name(key_id, query, "xlsx"), XLSX)


@endpoint(
    bp,
    "GET",
    "/shops/<int:key_id>/statement.html",
    guard=D,
    query=schemas.RangeQuery,
    errors=(404, 422),
    error_notes=RANGE_422,
    response_content_type="text/html",
    response_description="a printable page of the statement in the caller's language, no script",
    tags=TAGS,
)
def shop_statement_html(key_id: int, query: schemas.RangeQuery):
    """A shop's statement as a printable HTML page."""
    _checked(query.start, query.end)
    company_id = current_caller().company_id
    statement = service.statement(company_id, key_id, query.start, query.end)
    rows = list(service.lines(company_id, key_id, query.start, query.end))
    html = page.render(statement, rows, language.of_request())
    return Response(
        html,
        mimetype="text/html",
        headers={
            "Cache-Control": "no-store",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        },
    )


@endpoint(
    bp,
    "POST",
    "/shops/<int:key_id>/remittances",
    guard=O,
    body=schemas.RemittanceCreate,
    status=201,
    response=schemas.RemittanceEnvelope,
    errors=(404, 409, 422),
    error_notes={
        409: "code already_paid: the period, or part of it, is paid; period_open: its last day is not "
        "over; statement_unbalanced: the orders' cash does not match the cash ledger",
        **RANGE_422,
    },
    tags=TAGS,
)
def mark_paid(key_id: int, body: schemas.RemittanceCreate):
    """Mark a shop's statement for [from, to) paid, with the transfer's reference (audited): the
    sums are kept as they stand. A period overlapping a paid one is refused."""
    _checked(body.start, body.end)
    caller = current_caller()
    remittance = service.mark_paid(
        caller.company_id, key_id, body.start, body.end, body.reference, caller.user.id
    )
    return {"remittance": remittance}


@endpoint(
    bp,
    "GET",
    "/shops/<int:key_id>/remittances",
    guard=D,
    response=schemas.RemittanceList,
    errors=(404,),
    tags=TAGS,
)
def list_remittances(key_id: int):
    """A shop's paid periods, newest first (at most 500)."""
    return {"remittances": service.remittances(current_caller().company_id, key_id)}


@endpoint(
    bp,
    "GET",
    "/statements",
    guard=K,
    query=schemas.RangeQuery,
    response=schemas.Statement,
    errors=(422,),
    error_notes=RANGE_422,
    tags=TAGS,
)
def own_statement(query: schemas.RangeQuery):
    """The calling shop's own statement (an integration key only): the same as
    GET /shops/{id}/statement for its key."""
    _checked(query.start, query.end)
    caller = current_actor()
    assert isinstance(caller, IntegrationCaller)  # K takes keys only
    return service.statement(caller.company_id, caller.key_id, query.start, query.end)


@endpoint(
    bp,
    "GET",
    "/statements.csv",
    guard=K,
    query=schemas.RangeQuery,
    errors=(422,),
    error_notes=RANGE_422,
    response_content_type="text/csv",
    response_description="the calling shop's statement as CSV (columns in docs/statements.md)",
    tags=TAGS,
)
def own_statement_csv(query: schemas.RangeQuery):
    """The calling shop's own statement as CSV (an integration key only)."""
    _checked(query.start, query.end)
    caller = current_actor()
    assert isinstance(caller, IntegrationCaller)
    rows = service.lines(caller.company_id, caller.key_id, query.start, query.end)
    return _download(
        stream_with_context(writers.csv_chunks(service.COLUMNS, rows)),
        _name(caller.key_id, query, "csv"),
        "text/csv",
    )
