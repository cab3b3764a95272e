"""`appliance orders import` (the same import as POST /orders/import, on the data directory) and
the import's place in the OpenAPI document."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from tests.conftest import BACKEND
from tests.dispatch.import_helpers import csv_bytes, row, xlsx_bytes


@pytest.mark.skipif(BACKEND == "postgres", reason="the command reads the data directory's own databases")
def test_the_command_dry_runs_imports_and_is_idempotent(
    dispatch_client, dispatcher, company, settings, tmp_path
) -> None:
    path = tmp_path / "orders.csv"
    path.write_bytes(csv_bytes([row(1), row(2), row(3, recipientPhone="12")]))
    base = ["orders", "import", str(path), "--company", str(company.id), "--data-dir", settings.data_dir]

    dry = CliRunner().invoke(cli, [*base, "--dry-run", "--json"])
    assert dry.exit_code == 1, dry.output  # a row is refused
    assert json.loads(dry.stdout)["created"] == 2
    assert dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"] == []

    done = CliRunner().invoke(cli, [*base, "--json"])
    answer = json.loads(done.stdout)
    assert (answer["created"], answer["existing"]) == (2, 0)
    assert answer["refused"] == [
        {
            "row": 4,
            "column": "recipientPhone",
            "header": "recipientPhone",
            "message": "not a valid phone number: '12'",
        }
    ]
    listed = dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    assert sorted(o["externalRef"] for o in listed) == ["SHOP-1", "SHOP-2"]

    again = CliRunner().invoke(cli, base)
    assert "created 0, existing 2, refused rows 1" in again.stdout
    assert "row 4 recipientPhone: not a valid phone number" in again.stdout


@pytest.mark.skipif(BACKEND == "postgres", reason="the command reads the data directory's own databases")
def test_the_command_reads_xlsx_and_names_a_missing_company(settings, tmp_path) -> None:
    path = tmp_path / "orders.xlsx"
    path.write_bytes(xlsx_bytes([list(row(1)), list(row(1).values())]))
    result = CliRunner().invoke(
        cli, ["orders", "import", str(path), "--company", "999", "--data-dir", settings.data_dir]
    )
    assert result.exit_code == 1 and "No company 999" in result.output


def test_the_openapi_document_describes_both_ways_to_send_the_file(dispatch_client) -> None:
    operation = dispatch_client.get("/openapi.json").json["paths"]["/orders/import"]["post"]
    content = operation["requestBody"]["content"]
    assert set(content) == {"text/csv", "multipart/form-data"}
    assert content["multipart/form-data"]["schema"]["properties"]["file"]["format"] == "binary"
    assert set(operation["responses"]) == {"200", "400", "401", "403", "413", "415", "422"}  # 422: shopId
    assert [p["name"] for p in operation["parameters"]] == ["dryRun", "status", "shopId"]
    created = dispatch_client.get("/openapi.json").json["paths"]["/orders"]["post"]["responses"]
    assert "409" in created
