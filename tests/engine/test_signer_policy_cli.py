"""`appliance signer-policy …` on signer.db when no signer runs (the administrator's file), with
--json: set, show, pause, journal-verify; a bad value is one line, exit 1."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from click.testing import CliRunner

from appliance.cli import cli
from appliance.settings import Settings


def run(settings: Settings, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--data-dir", str(settings.data_dir), "--json"])
    return result.exit_code, result.output


def test_signer_policy_commands_change_signer_db_and_report_delays_as_json(settings: Settings) -> None:
    code, out = run(
        settings, "signer-policy", "set", "max_payout_minor", "5000",
        "--operator", "op_alpha0001", "--chain-id", "eth_local", "--asset", "ETH",
    )  # fmt: skip
    assert code == 0, out
    assert json.loads(out)["delayed"] is False
    code, out = run(
        settings, "signer-policy", "set", "max_fee_per_gas_wei", "9000000000000", "--network-id", "1337"
    )
    assert code == 0 and json.loads(out)["delayed"] is True  # above the default 2,000 gwei: looser
    code, out = run(settings, "signer-policy", "pause", "--operator", "op_alpha0001")
    assert code == 0 and json.loads(out)["value"] == "true"
    code, out = run(settings, "signer-policy", "show")
    shown = json.loads(out)
    assert {(v["name"], v["value"]) for v in shown["values"]} == {
        ("max_payout_minor", "5000"),
        ("paused", "true"),
    }
    assert [p["name"] for p in shown["pending"]] == ["max_fee_per_gas_wei"]
    code, out = run(settings, "signer-policy", "journal-verify")
    assert code == 0 and json.loads(out) == {"ok": True, "entries": 0, "head": "0" * 64, "problem": None}
    for name in ("signer.db", "signer-admin.token"):
        assert stat.S_IMODE((Path(settings.data_dir) / name).stat().st_mode) == 0o600
    code, out = run(settings, "signer-policy", "set", "max_payout_minor", "1e9", "--operator", "x")
    assert code == 1 and "chainId must be a non-empty string" in out
    code, out = run(settings, "signer-policy", "set", "gas_topup_cap_wei", "1e9")
    assert code == 1 and "gas_topup_cap_wei is a whole number" in out
