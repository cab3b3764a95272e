"""Reports from real payouts and deposits on the embedded chain; exports, their snapshots and
their streamed CSV downloads."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.client import EngineClient
from appliance.engine.db import database
from appliance.engine.deposits.watcher import DepositWatcher
from appliance.engine.exports import service as export_service
from appliance.engine.models import ReportRow
from appliance.engine.reports.projector import ReportProjector
from appliance.settings import Settings
from tests.conftest import serving
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, Harness, harness_settings, make_harness

HEADER = ["period", "asset", "count", "total_amount_minor", "total_fee_minor", "as_of"]


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


PROJECTOR = ReportProjector()  # one holder: a second projector would wait for the first one's lease


def project() -> None:
    with database.connection_context():
        while PROJECTOR.run_pass():
            pass


def report(harness: Harness, kind: str, asset: str | None = None, signer: Signer | None = None) -> dict:
    query = f"?type={kind}" + (f"&asset={asset}" if asset else "")
    response = (signer or harness.signer).request("GET", "/v1/reports" + query)
    assert response.status_code == 200, response.json
    return response.json


def totals(body: dict) -> dict[str, tuple[str, str, str]]:
    return {r["assetCode"]: (r["count"], r["totalAmountMinor"], r["totalFeeMinor"]) for r in body["rows"]}


@pytest.fixture
def activity(harness: Harness) -> dict:
    """Three completed payouts (two ETH, one USDC) and two confirmed deposits (ETH, USDC)."""
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    chain.faucet("USDC", PAYOUT_WALLET, 10**9)
    harness.submit("pyo_report0001", 100)
    harness.submit("pyo_report0002", 200)
    harness.submit("pyo_report0003", 5_000_000, asset="USDC")
    ids = ["pyo_report0001", "pyo_report0002", "pyo_report0003"]
    harness.drive(lambda: all(harness.payout(p).status == "COMPLETED" for p in ids))
    fees = sum(int(harness.detail(p)["broadcast"]["networkFeeMinor"]) for p in ids)
    address = harness.signer.request(
        "POST", "/v1/deposit-addresses", {"accountRef": "c1", "chainId": "eth_local"}
    ).json["address"]
    chain.faucet("ETH", address, 7 * ETHER)
    chain.faucet("USDC", address, 3_000_000)
    chain.mine()
    chain.mine()
    watcher = DepositWatcher(harness.app.extensions["engine"].chains)
    with database.connection_context():
        watcher.run_pass()
        watcher.run_pass()
    return {"fees": fees}


def test_a_projection_never_built_differs_from_an_empty_one(harness: Harness) -> None:
    assert report(harness, "PAYOUTS") == {
        "operatorId": "op_alpha0001",
        "reportType": "PAYOUTS",
        "builtThrough": None,
        "rows": [],
    }
    project()
    built = report(harness, "PAYOUTS")
    assert built["builtThrough"] is not None and built["rows"] == []


def test_every_report_type_matches_hand_computed_totals(harness: Harness, activity: dict) -> None:
    project()
    fees = str(activity["fees"])
    assert totals(report(harness, "PAYOUTS")) == {"ETH": ("2", "300", "0"), "USDC": ("1", "5000000", "0")}
    assert totals(report(harness, "DEPOSITS")) == {
        "ETH": ("1", str(7 * ETHER), "0"),
        "USDC": ("1", "3000000", "0"),
    }
    assert totals(report(harness, "FEES")) == {"ETH": ("3", "0", fees)}
    treasury = {"ETH": ("3", str(7 * ETHER + 300), fees), "USDC": ("2", "8000000", "0")}
    assert totals(report(harness, "TREASURY")) == treasury
    summary = report(harness, "SUMMARY")
    assert totals(summary) == treasury and {r["periodBucket"] for r in summary["rows"]} == {"all"}
    assert totals(report(harness, "PAYOUTS", "USDC")) == {"USDC": ("1", "5000000", "0")}
    day = report(harness, "PAYOUTS")["rows"][0]["periodBucket"]
    assert len(day) == 10 and day[4] == "-"  # a UTC day


def test_a_projection_rebuilt_from_scratch_equals_the_incremental_one(
    harness: Harness, activity: dict
) -> None:
    project()

    def rows() -> list[tuple]:
        with database.connection_context():
            return sorted(
                (r.operator_id, r.report_type, r.asset_code, r.period, r.count, r.total_amount, r.total_fee)
                for r in ReportRow.select()
            )

    incremental = rows()
    with database.connection_context():
        PROJECTOR.batch = 2
        PROJECTOR.rebuild()
        PROJECTOR.batch = 1000
    assert rows() == incremental and len(incremental) == 9  # 2 + 2 + 1 + 2 + 2


def test_appliance_reports_rebuild_builds_the_projection_again_from_every_event(
    harness: Harness, activity: dict
) -> None:
    project()
    incremental = {kind: report(harness, kind)["rows"] for kind in ("PAYOUTS", "DEPOSITS", "FEES", "SUMMARY")}
    with database.connection_context():
        ReportRow.update(count=ReportRow.count + 5).execute()  # a projection gone wrong
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    result = CliRunner().invoke(cli, ["reports", "rebuild", "--data-dir", data_dir, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["rows"] == 9 and summary["events"] >= 5 and summary["builtThrough"]

    def without_times(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "asOfTime"} for r in rows]

    for kind, rows in incremental.items():
        assert without_times(report(harness, kind)["rows"]) == without_times(rows), kind
    project()  # the serving projector goes on from where the rebuild ended: nothing counted twice
    for kind, rows in incremental.items():
        assert without_times(report(harness, kind)["rows"]) == without_times(rows), kind


def test_reports_are_the_callers_own_and_bad_parameters_are_400(harness: Harness, activity: dict) -> None:
    project()
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    assert report(harness, "PAYOUTS", signer=other)["rows"] == []
    for query in ("?type=BALANCES", "", "?type=PAYOUTS&asset=eth", "?type=payouts"):
        assert harness.signer.request("GET", "/v1/reports" + query).status_code == 400, query


def export_request(job_id: str = "job-0000001", **changes: str) -> dict:
    body = {
        "jobId": job_id,
        "reportType": "PAYOUTS",
        "assetCode": "ETH",
        "fromTime": "2000-01-01T00:00:00Z",
        "toTime": "2100-01-01T00:00:00Z",
    }
    return {**body, **changes}


def complete_exports() -> None:
    with database.connection_context():
        export_service.ExportWorker().run_pass()


def test_exports_are_idempotent_on_the_job_id_and_validated(harness: Harness) -> None:
    first = harness.signer.request("POST", "/v1/exports", export_request())
    assert first.status_code == 202
    assert first.json["status"] == "PENDING" and first.json["jobId"] == "job-0000001"
    again = harness.signer.request("POST", "/v1/exports", export_request())
    assert again.status_code == 202 and again.json == first.json
    assert harness.signer.request("POST", "/v1/exports", export_request(assetCode="USDC")).status_code == 409
    for bad in (
        export_request("short"),
        export_request(reportType="BALANCES"),
        export_request(assetCode="eth"),
        export_request(fromTime="2026-01-01T00:00:00"),  # no offset
        export_request(fromTime="2026-02-01T00:00:00Z", toTime="2026-01-01T00:00:00Z"),
        export_request(toTime="yesterday"),
    ):
        assert harness.signer.request("POST", "/v1/exports", bad).status_code == 400, bad
    pending = harness.signer.request("GET", "/v1/exports/job-0000001").json
    assert pending["status"] == "PENDING" and pending["rowCount"] is None and pending["downloadUrl"] is None
    assert harness.signer.request("GET", "/v1/exports/job-0000001/download").status_code == 409
    other_op = make_operator(harness.app, "op_beta00001")
    other = Signer(harness.app.test_client(), other_op["operatorId"], other_op["secret"])
    assert other.request("GET", "/v1/exports/job-0000001").status_code == 404
    assert other.request("GET", "/v1/exports/job-missing01").status_code == 404


def test_a_completed_export_is_a_snapshot_that_every_download_repeats(
    harness: Harness, activity: dict
) -> None:
    project()
    harness.signer.request("POST", "/v1/exports", export_request())
    complete_exports()
    job = harness.signer.request("GET", "/v1/exports/job-0000001").json
    assert job["status"] == "COMPLETE" and job["rowCount"] == "1"
    assert job["downloadUrl"] == "/v1/exports/job-0000001/download"
    response = harness.signer.request("GET", job["downloadUrl"])
    assert response.status_code == 200 and response.mimetype == "text/csv"
    parsed = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    row = report(harness, "PAYOUTS", "ETH")["rows"][0]
    assert parsed == [HEADER, [row["periodBucket"], "ETH", "2", "300", "0", row["asOfTime"]]]
    harness.submit("pyo_report0004", 50)  # later facts change the report, not the snapshot
    harness.drive(lambda: harness.payout("pyo_report0004").status == "COMPLETED")
    project()
    assert report(harness, "PAYOUTS", "ETH")["rows"][0]["count"] == "3"
    assert harness.signer.request("GET", job["downloadUrl"]).get_data() == response.get_data()


def seed_rows(operator: str, count: int) -> list[list[str]]:
    """``count`` synthetic PAYOUTS rows of ETH, one a UTC day from 1800-01-01 (report rows are
    day-and-asset totals, so a large export needs many days)."""
    from datetime import date, timedelta

    from appliance.common import clock

    moment = clock.now()
    rows, expected = [], []
    start = date(1800, 1, 1)
    for n in range(count):
        day = (start + timedelta(days=n)).isoformat()
        amount = str(10**30 + n)
        rows.append(
            {
                "operator": operator,
                "report_type": "PAYOUTS",
                "asset_code": "ETH",
                "period": day,
                "count": n + 1,
                "total_amount": amount,
                "total_fee": "0",
                "as_of": moment,
            }
        )
        expected.append([day, "ETH", str(n + 1), amount, "0", clock.iso(moment)])
    with database.connection_context():
        for chunk in range(0, count, 5000):
            ReportRow.insert_many(rows[chunk : chunk + 5000]).execute()
    return expected


def test_a_download_of_100000_rows_streams_exactly_the_report(harness: Harness) -> None:
    expected = seed_rows("op_alpha0001", 100_000)
    body = export_request(fromTime="1800-01-01T00:00:00Z", toTime="2100-01-01T00:00:00Z")
    assert harness.signer.request("POST", "/v1/exports", body).status_code == 202
    complete_exports()
    assert harness.signer.request("GET", "/v1/exports/job-0000001").json["rowCount"] == "100000"
    with serving(harness.app) as url:
        client = EngineClient(url, harness.signer.operator_id, harness.signer.secret)
        content = b"".join(client.download_export("job-0000001"))
        parsed = list(csv.reader(io.StringIO(content.decode())))
    assert parsed[0] == HEADER and parsed[1:] == expected


def test_a_stream_broken_mid_way_is_a_failed_transfer_for_the_client(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_rows("op_alpha0001", 20_000)
    body = export_request(fromTime="1800-01-01T00:00:00Z", toTime="2100-01-01T00:00:00Z")
    harness.signer.request("POST", "/v1/exports", body)
    complete_exports()
    real = export_service._cursor_rows

    def breaking(url: str, pk: int, chunk_rows: int):
        for n, rows in enumerate(real(url, pk, chunk_rows)):
            if n == 3:
                raise OSError("the disk went away")  # on purpose, after rows were sent
            yield rows

    monkeypatch.setattr(export_service, "_cursor_rows", breaking)
    with serving(harness.app) as url:
        client = EngineClient(url, harness.signer.operator_id, harness.signer.secret)
        received = []
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            for chunk in client.download_export("job-0000001"):
                received.append(chunk)
        assert received  # rows had arrived before the break: a short file that must not be trusted


def _download(runner: CliRunner, data_dir: str, job_id: str, out: Path):
    return runner.invoke(
        cli,
        [
            "export",
            "download",
            "--data-dir",
            data_dir,
            "--operator",
            "op_alpha0001",
            job_id,
            "--out",
            str(out),
        ],
    )


def test_the_cli_creates_and_downloads_an_export_to_a_file(
    harness: Harness, activity: dict, tmp_path: Path
) -> None:
    project()
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    runner = CliRunner()
    created = runner.invoke(
        cli,
        [
            "export",
            "create",
            "--data-dir",
            data_dir,
            "--json",
            "--operator",
            "op_alpha0001",
            "--report-type",
            "PAYOUTS",
            "--asset",
            "USDC",
            "--from",
            "2000-01-01T00:00:00Z",
            "--to",
            "2100-01-01T00:00:00Z",
            "--job-id",
            "cli-job-0001",
        ],
    )
    assert created.exit_code == 0, created.output
    job = json.loads(created.stdout)
    assert job["status"] == "COMPLETE" and job["rowCount"] == "1"
    out = tmp_path / "payouts.csv"
    downloaded = _download(runner, data_dir, "cli-job-0001", out)
    assert downloaded.exit_code == 0, downloaded.output
    parsed = list(csv.reader(out.open()))
    assert parsed[0] == HEADER and parsed[1][1:5] == ["USDC", "1", "5000000", "0"]
    missing = _download(runner, data_dir, "nope-nope-1", tmp_path / "x.csv")
    assert missing.exit_code != 0 and not (tmp_path / "x.csv").exists()
    assert not list(tmp_path.glob(".*.part"))


def test_an_export_over_the_widest_range_of_times_is_answered(harness: Harness) -> None:
    body = export_request(fromTime="0001-01-01T00:00:00Z", toTime="9999-12-31T23:59:59Z")
    assert harness.signer.request("POST", "/v1/exports", body).status_code == 202
    job = harness.signer.request("GET", "/v1/exports/job-0000001").json
    assert job["fromTime"] == "0001-01-01T00:00:00.000Z" and job["toTime"].startswith("9999-12-31")
    seed_rows("op_alpha0001", 3)
    complete_exports()
    assert harness.signer.request("GET", "/v1/exports/job-0000001").json["rowCount"] == "3"


def test_a_cli_download_failing_mid_way_exits_non_zero_and_leaves_no_file(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_rows("op_alpha0001", 10_000)
    harness.signer.request("POST", "/v1/exports", export_request(fromTime="1800-01-01T00:00:00Z"))
    complete_exports()

    def breaking(url: str, pk: int, chunk_rows: int = 2000):
        yield b"period,asset\r\n"
        raise OSError("the disk went away")

    monkeypatch.setattr(export_service, "stream_csv", breaking)
    out = tmp_path / "broken.csv"
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    result = _download(CliRunner(), data_dir, "job-0000001", out)
    assert result.exit_code != 0
    assert not out.exists() and not list(tmp_path.glob(".broken.csv.*"))


def test_a_projection_lease_created_by_another_process_at_the_same_moment_is_theirs(
    engine_app, monkeypatch
) -> None:
    from appliance.common import lease
    from appliance.engine.reports import projector as projector_module

    first, second = ReportProjector(), ReportProjector()
    with engine_app.app_context(), database.connection_context():
        assert first._take_lease() is not None
        monkeypatch.setattr(
            lease, "locked", lambda query: query.where(projector_module.Projection.name == "")
        )
        assert second._take_lease() is None  # before: an IntegrityError, logged as a failed pass


def test_an_export_neutralises_formulas_in_its_text_columns_and_keeps_amounts_numbers(
    harness: Harness,
) -> None:
    """No route puts free text in the engine's export today (assets match [A-Z0-9]{2,16}, periods
    are days or "all"): a snapshot holding hostile text, as a future asset list or a damaged row
    could, is downloaded with its text columns neutralised, while a negative amount stays a number."""
    from appliance.engine.models import ExportJob, ExportRow

    assert harness.signer.request("POST", "/v1/exports", export_request()).status_code == 202
    complete_exports()
    with database.connection_context():
        job = ExportJob.get(ExportJob.job_id == "job-0000001")
        ExportRow.insert(
            job=job.id, seq=1, period="@SUM(A1)", asset_code='=HYPERLINK("x")', count=1,
            total_amount="-5", total_fee="0", as_of="2026-11-28T00:00:00.000Z",
        ).execute()  # fmt: skip
    response = harness.signer.request("GET", "/v1/exports/job-0000001/download")
    assert response.status_code == 200
    parsed = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert parsed == [HEADER, ["'@SUM(A1)", '\'=HYPERLINK("x")', "1", "-5", "0", "2026-11-28T00:00:00.000Z"]]
