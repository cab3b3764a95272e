from pathlib import Path

import pytest

from appliance.settings import SettingsError, load_settings


def test_defaults_apply_when_nothing_is_configured(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    assert settings.dispatch_port == 8080
    assert settings.engine_port == 8081
    assert settings.dispatch_db_url == f"sqlite:///{tmp_path / 'dispatch.db'}"


def test_the_settings_file_overrides_defaults_and_the_environment_overrides_the_file(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text('dispatch_port = 9000\nengine_port = 9001\nhost = "0.0.0.0"\n')
    settings = load_settings({"data_dir": str(tmp_path)}, environ={"APPLIANCE_ENGINE_PORT": "9100"})
    assert settings.dispatch_port == 9000
    assert settings.engine_port == 9100
    assert settings.host == "0.0.0.0"


def test_flags_override_the_environment(tmp_path: Path) -> None:
    settings = load_settings(
        {"data_dir": str(tmp_path), "dispatch_port": 7000}, environ={"APPLIANCE_DISPATCH_PORT": "9000"}
    )
    assert settings.dispatch_port == 7000


def test_the_data_directory_comes_from_the_environment_when_no_flag_is_given(tmp_path: Path) -> None:
    settings = load_settings({}, environ={"APPLIANCE_DATA_DIR": str(tmp_path)})
    assert settings.data_dir == tmp_path


def test_an_unknown_key_in_the_settings_file_stops_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text("dispach_port = 9000\n")
    with pytest.raises(SettingsError, match="dispach_port"):
        load_settings({"data_dir": str(tmp_path)}, environ={})


def test_an_unknown_environment_variable_stops_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="APPLIANCE_NOPE"):
        load_settings({"data_dir": str(tmp_path)}, environ={"APPLIANCE_NOPE": "1"})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("APPLIANCE_DISPATCH_PORT", "eighty"),
        ("APPLIANCE_WEBHOOK_ALLOW_PRIVATE", "maybe"),
        ("APPLIANCE_DISPATCH_PORT", "70000"),
        ("APPLIANCE_ENGINE_DATABASE", "mysql://x"),
    ],
)
def test_a_bad_value_stops_with_the_setting_named(tmp_path: Path, name: str, value: str) -> None:
    key = name.removeprefix("APPLIANCE_").lower()
    with pytest.raises(SettingsError, match=key):
        load_settings({"data_dir": str(tmp_path)}, environ={name: value})


def test_a_broken_settings_file_stops_with_the_file_named(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text("dispatch_port = \n")
    with pytest.raises(SettingsError, match=r"appliance\.toml"):
        load_settings({"data_dir": str(tmp_path)}, environ={})


def test_settings_are_frozen(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    with pytest.raises(AttributeError):
        settings.dispatch_port = 1  # type: ignore[misc]


CHAIN_TOML = """
[[chains]]
id = "eth_sepolia"
rpc_url = "https://sepolia.example/rpc"
network_id = 11155111
environment = "testnet"

[[chains.assets]]
code = "ETH"
kind = "native"
decimals = 18
confirmations = 12

[[chains.assets]]
code = "USDC"
kind = "ERC20"
decimals = 6
confirmations = 12
contract = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
"""


def test_chains_are_tables_of_the_settings_file_with_their_assets(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text(CHAIN_TOML)
    [chain] = load_settings({"data_dir": str(tmp_path)}, environ={}).chains
    assert (chain.id, chain.network_id, chain.environment) == ("eth_sepolia", 11155111, "testnet")
    assert [(a.code, a.kind, a.decimals, a.confirmations) for a in chain.assets] == [
        ("ETH", "native", 18, 12),
        ("USDC", "ERC20", 6, 12),
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('rpc_url = "https://sepolia.example/rpc"', 'rpc_url = "https://x"\nrpc = "y"'), "unknown keys"),
        (("confirmations = 12\ncontract", "confirmation = 12\ncontract"), "unknown keys"),
        (('id = "eth_sepolia"', 'id = "eth_local"'), "not eth_local"),
        (('rpc_url = "https://sepolia.example/rpc"', 'rpc_url = "ftp://x"'), "rpc_url"),
        (('kind = "ERC20"', 'kind = "ERC721"'), "kind"),
        (("network_id = 11155111", 'network_id = "many"'), "malformed"),
        (
            ("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C723"),
            "contract",
        ),
        (
            ("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238", "0xZZ7D4B196Cb0C7B01d743Fbc6116a902379C7238"),
            "contract",
        ),
    ],
)
def test_a_chain_table_with_an_unknown_key_or_a_bad_value_stops_start_up(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    (tmp_path / "appliance.toml").write_text(CHAIN_TOML.replace(*change, 1))
    with pytest.raises(SettingsError, match=message):
        load_settings({"data_dir": str(tmp_path)}, environ={})


def test_the_serving_process_count_is_the_setting_or_one_per_usable_core_and_one_more(tmp_path: Path) -> None:
    import os

    assert load_settings({"data_dir": str(tmp_path), "processes": 3}, environ={}).serving_process_count == 3
    cores = len(os.sched_getaffinity(0))
    assert load_settings({"data_dir": str(tmp_path)}, environ={}).serving_process_count == cores + 1
    assert load_settings({"data_dir": str(tmp_path)}, environ={"APPLIANCE_PROCESSES": "2"}).processes == 2


@pytest.mark.parametrize("count", [-1, 65])
def test_a_process_count_out_of_range_is_refused(tmp_path: Path, count: int) -> None:
    with pytest.raises(SettingsError, match="processes"):
        load_settings({"data_dir": str(tmp_path), "processes": count}, environ={})
