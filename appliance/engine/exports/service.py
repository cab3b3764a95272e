"""Export jobs: idempotent on (operator, jobId); a worker snapshots the report rows of the range
into export_row in ONE transaction (so rowCount is what every later download streams); downloads
stream the snapshot row by row from a cursor on a connection of their own.

A job covers the rows whose period (a UTC day) starts in [fromTime, toTime); SUMMARY rows (period
"all") are always included. FAILED is added to the spec's PENDING and COMPLETE: a job whose
snapshot failed five times (the reason is on the job).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import peewee

from appliance.common import cells, clock
from appliance.common.db import is_sqlite, write_transaction
from appliance.common.jobs import LeasedQueue
from appliance.common.problems import BadRequest, Conflict, NotFound
from appliance.engine import audit
from appliance.engine.db import database
from appliance.engine.models import ExportJob, ExportRow

HEADER = ("period", "asset", "count", "total_amount_minor", "total_fee_minor", "as_of")
# The text columns (period, asset) are neutralised against formula injection (common/cells.py);
# count and the amounts are decimal strings of the specification and stay numbers, a sign included.
TEXT_COLUMNS = (0, 1)
MAX_ATTEMPTS = 5


def _hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def job_body(job: ExportJob) -> dict[str, Any]:
    complete = job.status == "COMPLETE"
    return {
        "jobId": job.job_id,
        "status": job.status,
        "createdAt": clock.iso(job.created_at),
        "reportType": job.report_type,
        "assetCode": job.asset_code,
        "fromTime": clock.iso(job.from_time),
        "toTime": clock.iso(job.to_time),
        "completedAt": clock.iso(job.completed_at),
        "rowCount": str(job.row_count) if complete else None,
        "downloadUrl": f"/v1/exports/{job.job_id}/download" if complete else None,
        "reason": job.last_error if job.status == "FAILED" else None,
    }


def create(
    operator_id: str, job_id: str, report_type: str, asset: str, from_time: datetime, to_time: datetime
) -> dict[str, Any]:
    if to_time <= from_time:
        raise BadRequest(
            "toTime must be after fromTime.", errors=[{"field": "toTime", "message": "not after fromTime"}]
        )
    request = {
        "reportType": report_type,
        "assetCode": asset,
        "fromTime": clock.iso(from_time),
        "toTime": clock.iso(to_time),
    }
    digest = _hash(request)

    def answer(job: ExportJob) -> dict[str, Any]:
        if job.request_hash != digest:
            raise Conflict(f"Export job {job_id} exists with a different request.")
        return {"jobId": job.job_id, "status": job.status, "createdAt": clock.iso(job.created_at)}

    existing = ExportJob.get_or_none((ExportJob.operator == operator_id) & (ExportJob.job_id == job_id))
    if existing is not None:
        return answer(existing)
    try:
        with write_transaction(database):
            job = ExportJob.create(
                job_id=job_id,
                operator=operator_id,
                report_type=report_type,
                asset_code=asset,
                from_time=from_time,
                to_time=to_time,
                request_hash=digest,
                next_attempt_at=clock.now(),
            )
            audit.record("export.requested", f"export:{job_id}", after=request, operator_id=operator_id)
    except peewee.IntegrityError:  # a simultaneous request with the same jobId made it first
        return answer(ExportJob.get((ExportJob.operator == operator_id) & (ExportJob.job_id == job_id)))
    return answer(job)


def get(operator_id: str, job_id: str) -> ExportJob:
    job = ExportJob.get_or_none((ExportJob.operator == operator_id) & (ExportJob.job_id == job_id))
    if job is None:
        raise NotFound("No such export job.")
    return job


class ExportWorker:
    def __init__(self) -> None:
        self.queue = LeasedQueue(
            ExportJob,
            database,
            pending=lambda: ExportJob.status == "PENDING",
            lease=timedelta(minutes=10),
            error_field="last_error",
        )

    def run_pass(self) -> int:
        done = 0
        for job_id in self.queue.claim(4):
            try:
                snapshot(ExportJob.get_by_id(job_id))
                done += 1
            except Exception as exc:
                job = ExportJob.get_by_id(job_id)
                if job.attempts + 1 >= MAX_ATTEMPTS:
                    ExportJob.update(
                        status="FAILED",
                        attempts=job.attempts + 1,
                        lease_until=None,
                        last_error=f"{type(exc).__name__}: {exc}"[:500],
                    ).where(ExportJob.id == job_id).execute()
                else:
                    self.queue.retry_later(job_id, f"{type(exc).__name__}: {exc}")
        return done


def snapshot(job: ExportJob) -> None:
    """Copy the job's report rows into export_row and complete it, in one transaction, with one
    INSERT … SELECT (the rows never pass through Python)."""
    sqlite = is_sqlite(database)
    p = "?" if sqlite else "%s"
    wire = (
        "substr(as_of, 1, 10) || 'T' || substr(as_of, 12, 12) || 'Z'"
        if sqlite
        else 'to_char(as_of, \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\')'
    )
    sql = (
        "INSERT INTO export_row (job_id, seq, period, asset_code, count, total_amount, total_fee, as_of) "
        f"SELECT {p}, ROW_NUMBER() OVER (ORDER BY period, asset_code), period, asset_code, count, "
        f"total_amount, total_fee, {wire} FROM report_row "
        f"WHERE operator_id = {p} AND report_type = {p} AND asset_code = {p} "
        f"AND (period = 'all' OR (period >= {p} AND period < {p}))"
    )
    params = (
        job.id,
        job.operator_id,
        job.report_type,
        job.asset_code,
        _day_starting_at_or_after(job.from_time),
        _day_starting_at_or_after(job.to_time),
    )
    with write_transaction(database):
        ExportRow.delete().where(ExportRow.job == job.id).execute()
        database.execute_sql(sql, params)
        count = ExportRow.select().where(ExportRow.job == job.id).count()
        ExportJob.update(
            status="COMPLETE", row_count=count, completed_at=clock.now(), lease_until=None, last_error=None
        ).where(ExportJob.id == job.id).execute()


def _day_starting_at_or_after(moment: datetime) -> str:
    """A period (UTC day) is in [fromTime, toTime) when its start is: compare with the first day
    starting at or after each bound."""
    moment = moment.astimezone(UTC)
    start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if start < moment:
        if start.date() == start.date().max:
            return "9999-12-32"  # after every day there is
        start += timedelta(days=1)
    return start.date().isoformat()


# -- streaming ---------------------------------------------------------------------------------------

SELECT_ROWS = (
    "SELECT period, asset_code, count, total_amount, total_fee, as_of FROM export_row "
    "WHERE job_id = {p} ORDER BY seq"
)


def stream_csv(database_url: str, job_pk: int, *, chunk_rows: int = 2000) -> Iterator[bytes]:
    """The CSV of a snapshot, a chunk of rows at a time, from a cursor on a connection of its own
    (the request's connection is given back at teardown, before the stream ends). Constant memory
    whatever the size. An error raised here reaches the server after the headers were sent: the
    connection is dropped and the client sees a broken transfer, never a short file."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(HEADER)
    yield buffer.getvalue().encode()
    for rows in _cursor_rows(database_url, job_pk, chunk_rows):
        buffer.seek(0)
        buffer.truncate()
        writer.writerows(cells.csv_row(row, TEXT_COLUMNS) for row in rows)
        yield buffer.getvalue().encode()


def _cursor_rows(database_url: str, job_pk: int, chunk_rows: int) -> Iterator[list[tuple[Any, ...]]]:
    if database_url.startswith("sqlite:///"):
        path = database_url[len("sqlite:///") :]
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            cursor = conn.execute(SELECT_ROWS.format(p="?"), (job_pk,))
            while rows := cursor.fetchmany(chunk_rows):
                yield rows
        finally:
            conn.close()
        return
    import psycopg2

    conn = psycopg2.connect(database_url)
    try:
        with conn.cursor(name=f"export_{job_pk}") as cursor:  # a server-side (named) cursor
            cursor.itersize = chunk_rows
            cursor.execute(SELECT_ROWS.format(p="%s"), (job_pk,))
            while rows := cursor.fetchmany(chunk_rows):
                yield rows
    finally:
        conn.close()
