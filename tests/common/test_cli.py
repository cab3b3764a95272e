import json
from pathlib import Path

from click.testing import CliRunner

from appliance import __version__
from appliance.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_version_prints_the_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert __version__ in result.output


def test_init_creates_both_databases_and_running_it_again_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = run("init", "--data-dir", str(data), "--json")
    assert first.exit_code == 0, first.output
    body = json.loads(first.output)
    assert body["dataDir"] == str(data.resolve())
    assert body["dispatch"]["schemaVersion"] >= 1
    assert body["engine"]["schemaVersion"] >= 1
    assert (data / "dispatch.db").exists() and (data / "engine.db").exists()
    second = run("init", "--data-dir", str(data), "--json")
    assert json.loads(second.output) == body


def test_migrate_can_target_one_service(tmp_path: Path) -> None:
    result = run("migrate", "--service", "engine", "--data-dir", str(tmp_path), "--json")
    body = json.loads(result.output)
    assert body["engine"]["schemaVersion"] >= 1
    assert body["dispatch"]["schemaVersion"] == 0


def test_a_usage_error_exits_2() -> None:
    assert run("migrate", "--service", "nope").exit_code == 2


def test_a_bad_setting_exits_1_with_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text("bogus = 1\n")
    result = CliRunner().invoke(cli, ["init", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "bogus" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_health_reports_every_check_and_exits_1_while_engines_are_not_built(tmp_path: Path) -> None:
    run("init", "--data-dir", str(tmp_path))
    result = CliRunner().invoke(cli, ["health", "--data-dir", str(tmp_path), "--json"])
    body = json.loads(result.output)
    assert set(body["dispatch"]["checks"]) == {"routing", "solver", "database", "tiles"}
    assert body["dispatch"]["checks"]["database"]["status"] == "pass"
    assert body["dispatch"]["checks"]["solver"]["status"] == "pass"
    assert body["engine"]["checks"]["database"]["status"] == "pass"
    assert body["dispatch"]["status"] == "degraded"
    assert result.exit_code == 1
