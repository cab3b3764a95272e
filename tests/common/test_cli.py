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


def test_health_on_a_fresh_install_is_degraded_and_exits_0_warning_that_roads_and_tiles_are_not_built(
    tmp_path: Path,
) -> None:
    run("init", "--data-dir", str(tmp_path))
    result = CliRunner().invoke(cli, ["health", "--data-dir", str(tmp_path), "--json"])
    body = json.loads(result.stdout)
    assert set(body["dispatch"]["checks"]) == {"routing", "solver", "database", "disk", "tiles"}
    assert body["dispatch"]["checks"]["database"]["status"] == "pass"
    assert body["dispatch"]["checks"]["solver"]["status"] == "pass"
    assert body["dispatch"]["checks"]["routing"]["status"] == "not_built"
    assert body["dispatch"]["checks"]["tiles"]["status"] == "not_built"
    assert body["engine"]["checks"]["database"]["status"] == "pass"
    assert body["dispatch"]["status"] == "degraded"
    assert body["engine"]["status"] == "pass"
    assert result.exit_code == 0
    warnings = result.stderr.strip().splitlines()
    named = [line.split(":")[1].strip() for line in warnings]
    assert named == ["dispatch routing not built", "dispatch tiles not built"]
    assert "appliance routing build" in warnings[0] and "appliance map build" in warnings[1]


def test_health_exits_1_when_a_check_fails_even_beside_checks_not_built(tmp_path: Path, monkeypatch) -> None:
    run("init", "--data-dir", str(tmp_path))
    monkeypatch.setenv("APPLIANCE_ROUTING_ENGINE", "osrm")
    monkeypatch.setenv("APPLIANCE_ROUTING_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    result = CliRunner().invoke(cli, ["health", "--data-dir", str(tmp_path), "--json"])
    body = json.loads(result.stdout)
    assert body["dispatch"]["checks"]["routing"]["status"] == "fail"
    assert body["dispatch"]["checks"]["tiles"]["status"] == "not_built"
    assert body["dispatch"]["status"] == "fail"
    assert result.exit_code == 1


def test_health_in_text_names_each_service_verdict_and_check(tmp_path: Path) -> None:
    run("init", "--data-dir", str(tmp_path))
    result = CliRunner().invoke(cli, ["health", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert "dispatch: degraded" in result.stdout and "engine: pass" in result.stdout
    assert "  routing: not_built (no road data built" in result.stdout
