"""GET /v1/reports, POST /v1/exports, GET /v1/exports/:jobId and its download (signed)."""

from __future__ import annotations

from flask import Blueprint, Response

from appliance.common.problems import Conflict
from appliance.engine.auth.signature import current_operator, signed_endpoint
from appliance.engine.exports import schemas, service
from appliance.engine.reports.service import report
from appliance.engine.runtime import runtime

bp = Blueprint("exports", __name__)


@signed_endpoint(
    bp,
    "GET",
    "/v1/reports",
    query=schemas.ReportQuery,
    response=schemas.Report,
    tags=["Reports"],
)
def get_report(query: schemas.ReportQuery):
    """One projection of the caller's facts; builtThrough null means never built (not an empty report)."""
    return report(current_operator(), query.type, query.asset)


@signed_endpoint(
    bp,
    "POST",
    "/v1/exports",
    body=schemas.ExportRequest,
    status=202,
    response=schemas.ExportAccepted,
    errors=(409,),
    tags=["Exports"],
    response_description="the job (the same jobId with the same request answers the same job)",
)
def create_export(body: schemas.ExportRequest):
    """Queue a CSV export of report rows whose UTC day starts in [fromTime, toTime); idempotent on jobId."""
    return service.create(
        current_operator(), body.jobId, body.reportType, body.assetCode, body.fromTime, body.toTime
    )


@signed_endpoint(
    bp,
    "GET",
    "/v1/exports/<job_id>",
    path=schemas.ExportPath,
    response=schemas.ExportJobBody,
    errors=(404,),
    tags=["Exports"],
)
def get_export(job_id: str):
    """The job's status; rowCount and downloadUrl once COMPLETE."""
    return service.job_body(service.get(current_operator(), job_id))


@signed_endpoint(
    bp,
    "GET",
    "/v1/exports/<job_id>/download",
    path=schemas.ExportPath,
    errors=(404, 409),
    tags=["Exports"],
    response_description="text/csv streamed row by row (header period,asset,count,total_amount_minor,"
    "total_fee_minor,as_of); a failure mid-stream drops the connection. A period or asset cell starting "
    "with = + - @, tab or CR would get a leading ' (formula injection); amounts are never changed",
)
def download_export(job_id: str):
    """The completed job's snapshot as CSV, streamed with constant memory."""
    job = service.get(current_operator(), job_id)
    if job.status != "COMPLETE":
        raise Conflict(f"Export job {job_id} is {job.status}, not COMPLETE: nothing to download yet.")
    stream = service.stream_csv(runtime().settings.engine_db_url, int(job.id))
    return Response(
        stream,
        status=200,
        mimetype="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{job_id}.csv"', "Cache-Control": "no-store"},
    )
