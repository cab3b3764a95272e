"""`appliance export create` and `appliance export download`: report exports from the command line,
on the data directory's engine database (as POST /v1/exports and the download endpoint do)."""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from appliance.cli._options import command_options, emit, output_path
from appliance.settings import Settings

REPORT_TYPES = ("DEPOSITS", "PAYOUTS", "TREASURY", "FEES", "SUMMARY")


def _engine(settings: Settings) -> Any:
    from appliance.cli.admin import migrate_all
    from appliance.common.db import bind_database
    from appliance.engine.db import database

    migrate_all(settings, ["engine"])
    bind_database(database, settings.engine_db_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
    return database


def _moment(value: str, name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 time", param_hint=name) from None
    if moment.tzinfo is None:
        raise click.BadParameter("give an offset or Z (for example 2026-11-01T00:00:00Z)", param_hint=name)
    return moment


@click.group("export")
def export_group() -> None:
    """CSV exports of the engine's reports."""


@export_group.command("create")
@click.option("--operator", "operator_id", required=True)
@click.option("--report-type", type=click.Choice(REPORT_TYPES), required=True)
@click.option("--asset", required=True)
@click.option("--from", "from_time", required=True, help="ISO 8601 with an offset (inclusive).")
@click.option("--to", "to_time", required=True, help="ISO 8601 with an offset (exclusive).")
@click.option("--job-id", default=None, help="8..64 of A-Za-z0-9_-; a new one when absent.")
@command_options
def create_command(
    operator_id: str,
    report_type: str,
    asset: str,
    from_time: str,
    to_time: str,
    job_id: str | None,
    settings: Settings,
    as_json: bool,
) -> None:
    """Create an export job and snapshot it now (a running server's worker would do the same)."""
    from pydantic import ValidationError

    from appliance.common.problems import ApiError
    from appliance.engine.exports import schemas, service
    from appliance.engine.models import ExportJob, Operator

    try:
        request = schemas.ExportRequest.model_validate(
            {
                "jobId": job_id or "job_" + secrets.token_hex(8),
                "reportType": report_type,
                "assetCode": asset,
                "fromTime": _moment(from_time, "--from"),
                "toTime": _moment(to_time, "--to"),
            }
        )
    except ValidationError as exc:
        raise click.ClickException(
            f"invalid export: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}"
        ) from None
    database = _engine(settings)
    with database.connection_context():
        if Operator.get_or_none(Operator.id == operator_id) is None:
            raise click.ClickException(f"operator {operator_id} does not exist")
        try:
            service.create(
                operator_id,
                request.jobId,
                request.reportType,
                request.assetCode,
                request.fromTime,
                request.toTime,
            )
        except ApiError as exc:
            raise click.ClickException(str(exc)) from None
        job = ExportJob.get((ExportJob.operator == operator_id) & (ExportJob.job_id == request.jobId))
        if job.status == "PENDING" and service.ExportWorker().queue.claim_one(job.id):
            service.snapshot(job)
        result = service.job_body(ExportJob.get_by_id(job.id))
    emit(as_json, result, f"export {result['jobId']}: {result['status']}, {result['rowCount']} rows")


@export_group.command("download")
@click.option("--operator", "operator_id", required=True)
@click.argument("job_id")
@click.option(
    "--out",
    "out",
    type=output_path(dir_okay=False),
    default=None,
    help="Write the CSV here (standard output when absent); nothing is left behind on failure.",
)
@command_options
def download_command(
    operator_id: str, job_id: str, out: Path | None, settings: Settings, as_json: bool
) -> None:
    """Stream a completed job's CSV, with a progress bar on standard error."""
    from tqdm import tqdm

    from appliance.common.problems import ApiError
    from appliance.engine.exports import service

    database = _engine(settings)
    with database.connection_context():
        try:
            job = service.get(operator_id, job_id)
        except ApiError:
            raise click.ClickException(f"no export job {job_id} for operator {operator_id}") from None
        if job.status != "COMPLETE":
            raise click.ClickException(f"export job {job_id} is {job.status}, not COMPLETE")
        total, pk = int(job.row_count), int(job.id)
    target = None
    handle: Any = sys.stdout.buffer
    if out is not None:
        fd, temp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
        target = Path(temp)
        handle = os.fdopen(fd, "wb")
    try:
        with tqdm(total=total, unit="rows", file=sys.stderr, disable=total < 10_000 or None) as progress:
            for chunk in service.stream_csv(settings.engine_db_url, pk):
                handle.write(chunk)
                progress.update(chunk.count(b"\n") - (1 if progress.n == 0 else 0))
        handle.flush()
        if target is not None:
            handle.close()
            target.replace(out)  # type: ignore[arg-type]
            target = None
    finally:
        if target is not None:  # failed: no partial file left behind
            handle.close()
            target.unlink(missing_ok=True)


def register(group: click.Group) -> None:
    group.add_command(export_group)
