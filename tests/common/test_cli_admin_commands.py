"""company and operator commands, and the demo seed, through the real CLI."""

import json
from pathlib import Path

from click.testing import CliRunner

from appliance.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_company_create_and_list_print_the_contracts_json(tmp_path: Path) -> None:
    created = run(
        "company",
        "create",
        "--data-dir",
        str(tmp_path),
        "--json",
        "--name",
        "Arev",
        "--owner-email",
        "Ani@Example.am",
        "--owner-name",
        "Ani",
        "--depot-name",
        "Main",
        "--depot-address",
        "Abovyan 1",
        "--depot-lat",
        "40.18",
        "--depot-lon",
        "44.51",
    )
    assert created.exit_code == 0, created.output
    body = json.loads(created.stdout)
    assert body == {
        "company": {"id": "1", "name": "Arev"},
        "owner": {"userId": "1", "email": "ani@example.am"},
    }
    listed = json.loads(run("company", "list", "--data-dir", str(tmp_path), "--json").stdout)
    assert listed == {"companies": [{"id": "1", "name": "Arev", "plan": "start", "members": 1}]}


def test_company_create_refuses_a_depot_outside_the_service_area(tmp_path: Path) -> None:
    result = run(
        "company",
        "create",
        "--data-dir",
        str(tmp_path),
        "--name",
        "Far",
        "--owner-email",
        "b@x.am",
        "--owner-name",
        "B",
        "--depot-name",
        "M",
        "--depot-address",
        "A",
        "--depot-lat",
        "48",
        "--depot-lon",
        "2",
    )
    assert result.exit_code == 1
    assert "service area" in result.output


def test_company_create_refuses_a_name_that_breaks_a_line(tmp_path: Path) -> None:
    """As the API refuses it (issue 41): a line break in a name would reach mail headers."""
    result = run(
        "company",
        "create",
        "--data-dir",
        str(tmp_path),
        "--name",
        "Poison\r\nX-Injected: 1",
        "--owner-email",
        "b@x.am",
        "--owner-name",
        "B",
        "--depot-name",
        "M",
        "--depot-address",
        "A",
        "--depot-lat",
        "40.18",
        "--depot-lon",
        "44.51",
    )
    assert result.exit_code == 1
    assert "company name must be one line" in result.output
    listed = json.loads(run("company", "list", "--data-dir", str(tmp_path), "--json").stdout)
    assert listed == {"companies": []}


def test_operator_commands_show_a_secret_once_and_never_list_it(tmp_path: Path) -> None:
    created = json.loads(
        run("operator", "create", "op_alpha0001", "--data-dir", str(tmp_path), "--json").stdout
    )
    assert set(created) == {"operatorId", "secretId", "secret"} and len(created["secret"]) == 64
    added = json.loads(
        run("operator", "add-secret", "op_alpha0001", "--data-dir", str(tmp_path), "--json").stdout
    )
    listed = run("operator", "list", "--data-dir", str(tmp_path), "--json").stdout
    assert created["secret"] not in listed and added["secret"] not in listed
    assert json.loads(listed) == {
        "operators": [{"operatorId": "op_alpha0001", "secretIds": [created["secretId"], added["secretId"]]}]
    }
    removed = json.loads(
        run(
            "operator",
            "remove-secret",
            "op_alpha0001",
            created["secretId"],
            "--data-dir",
            str(tmp_path),
            "--json",
        ).stdout
    )
    assert removed == {"operatorId": "op_alpha0001", "secretIds": [added["secretId"]]}
    assert (
        run("operator", "remove-secret", "op_alpha0001", "sec_nope", "--data-dir", str(tmp_path)).exit_code
        == 1
    )
    assert run("operator", "create", "op_alpha0001", "--data-dir", str(tmp_path)).exit_code == 1


def test_the_demo_seed_is_idempotent(tmp_path: Path) -> None:
    from appliance.cli.admin import migrate_all
    from appliance.demo import prepare_demo
    from appliance.settings import load_settings

    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    migrate_all(settings)
    first = prepare_demo(settings)
    second = prepare_demo(settings)
    assert any("owner@demo.am" in line for line in first)
    assert any("secret" in line for line in first)
    assert any("exists" in line for line in second)
    listed = json.loads(run("company", "list", "--data-dir", str(tmp_path), "--json").stdout)
    assert [c["members"] for c in listed["companies"]] == [3]
    # The custody key exists and the payout wallet is funded on the embedded chain, once.
    from appliance.engine.chain.registry import open_local_chain
    from appliance.engine.custody_file import load_custody

    custody = load_custody(tmp_path, "")
    assert custody is not None and (tmp_path / "custody.key").exists()
    chain = open_local_chain(settings)
    try:
        assert chain.balance(custody.payout_address) == 100 * 10**18
        assert chain.balance(custody.payout_address, chain.usdc_contract) == 1_000_000 * 10**6
        assert chain.balance(custody.fee_address) == 10 * 10**18
    finally:
        chain.close()


def test_the_demo_prints_the_dispatch_section_first_and_the_engine_words_only_in_their_own(
    tmp_path: Path,
) -> None:
    from appliance.cli.admin import migrate_all
    from appliance.demo import DISPATCH_HEADING, ENGINE_HEADING, prepare_demo
    from appliance.settings import load_settings

    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    migrate_all(settings)
    lines = prepare_demo(settings)
    assert lines[0] == DISPATCH_HEADING
    engine_at, try_at = lines.index(ENGINE_HEADING), lines.index("Try it:")
    dispatch, engine = lines[:engine_at], lines[engine_at:try_at]
    # For a courier company: the console and its sign-in, the order on its way, then the courier app.
    firsts = [
        next(i for i, line in enumerate(dispatch) if line.startswith(start))
        for start in ("Dispatcher console: ", "Tracking page of an order on its way: ", "Courier app: ")
    ]
    assert firsts == sorted(firsts) and firsts[0] == 1
    assert "owner@demo.am / demo-owner-pass" in dispatch[1]
    assert any(line.startswith("Roads: ") for line in dispatch)
    engine_words = ("custody", "wallet", "payout", "operator", "chain", "deposit", "engine", "eth", "usdc")
    assert not [line for line in dispatch if any(word in line.lower() for word in engine_words)]
    for start in ("Engine: operator ", "Custody: key ", "Local chain ", "Payouts: ", "Deposit: "):
        assert [line for line in engine if line.startswith(start)], (start, engine)
        assert not [line for line in lines[:engine_at] + lines[try_at:] if line.startswith(start)]
