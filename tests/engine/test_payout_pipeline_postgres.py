"""The payout pipeline with engine.db on a real PostgreSQL server: claims with FOR UPDATE SKIP
LOCKED, compare-and-set moves and nonce reservations under two racing workers."""

from __future__ import annotations

import pytest

from appliance.engine.db import database
from appliance.engine.models import Broadcast
from appliance.settings import Settings
from tests.engine.pipeline_harness import (
    ETHER,
    PAYOUT_WALLET,
    harness_settings,
    make_harness,
    race_two_workers,
)

pytestmark = pytest.mark.postgres


def test_two_workers_on_postgresql_pay_each_payout_once_with_consecutive_nonces(
    settings: Settings, migrated_postgres
) -> None:
    url = migrated_postgres("migrations.engine")
    settings = harness_settings(settings, {}).replace(engine_database=url)
    harness = make_harness(settings, lambda app: app.extensions["engine"].chains.get("eth_local").mine())
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    for n in range(8):
        harness.submit(f"pyo_pgrace{n:04d}", 500 + n, destination=f"0x{0xF000 + n:040x}")
    race_two_workers(harness, [f"pyo_pgrace{n:04d}" for n in range(8)])
    for n in range(8):
        assert chain.balance(f"0x{0xF000 + n:040x}") == 500 + n
    with database.connection_context():
        assert sorted(int(b.nonce) for b in Broadcast.select()) == list(range(8))
    database.close_all()


def test_an_export_streams_from_a_named_cursor_on_postgresql(settings: Settings, migrated_postgres) -> None:
    import csv
    import io

    from appliance.engine.exports import service as export_service
    from appliance.engine.models import ReportRow

    url = migrated_postgres("migrations.engine")
    settings = harness_settings(settings, {}).replace(engine_database=url)
    harness = make_harness(settings, lambda app: None)
    with database.connection_context():
        ReportRow.insert_many(
            [
                {
                    "operator": "op_alpha0001",
                    "report_type": "FEES",
                    "asset_code": "ETH",
                    "period": f"2026-01-{d:02d}",
                    "count": d,
                    "total_amount": "0",
                    "total_fee": str(10**25 + d),
                    "as_of": "2026-02-01 00:00:00",
                }
                for d in range(1, 32)
            ]
        ).execute()
    body = {
        "jobId": "pg-export-01",
        "reportType": "FEES",
        "assetCode": "ETH",
        "fromTime": "2026-01-01T00:00:00Z",
        "toTime": "2026-02-01T00:00:00Z",
    }
    assert harness.signer.request("POST", "/v1/exports", body).status_code == 202
    with database.connection_context():
        export_service.ExportWorker().run_pass()
    response = harness.signer.request("GET", "/v1/exports/pg-export-01/download")
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert len(rows) == 32 and rows[1][:5] == ["2026-01-01", "ETH", "1", "0", str(10**25 + 1)]
    assert rows[31][0] == "2026-01-31"
    database.close_all()
