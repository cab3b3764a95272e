"""Backups hold custody.key only encrypted: a plain key is left out (the manifest and the command
say so, and the operator keeps the 24 words instead); an encrypted one is restored as it was and
opens with its passphrase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.backup import Unlock, create_backup, restore_backup
from appliance.cli import cli
from appliance.common.sealing import Sealer
from appliance.engine.custody_file import encrypt_in_place, load_for
from appliance.settings import Settings, load_settings
from tests.conftest import BACKEND
from tests.engine.pipeline_harness import TEST_MNEMONIC

pytestmark = pytest.mark.skipif(BACKEND != "sqlite", reason="restores SQLite files of a data directory")


def _settings_for(target: Path) -> Settings:
    return load_settings({"data_dir": str(target)}, environ={})


def test_a_plain_custody_key_is_left_out_of_the_backup_and_the_command_warns(
    settings: Settings, engine_app, dispatch_app, tmp_path: Path
) -> None:
    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    made = CliRunner().invoke(
        cli,
        ["backup", "--out", str(tmp_path / "backup"), "--data-dir", str(settings.data_dir), "--json"],
        env={"APPLIANCE_BACKUP_PASSPHRASE": "backup passphrase"},
    )
    assert made.exit_code == 0, made.output
    result = json.loads(made.stdout)
    assert result["custodyKey"] == "left out (not encrypted)"
    assert "custody.key" not in {entry["path"] for entry in result["files"]}
    assert not (tmp_path / "backup" / "custody.key").exists()
    assert not any(
        "abandon" in p.read_text(errors="replace") for p in (tmp_path / "backup").rglob("*") if p.is_file()
    )
    assert "warning: custody.key is not encrypted, so it is not in this backup" in made.stderr

    unlock = Unlock(passphrase=lambda: "backup passphrase")
    restore_backup(tmp_path / "backup", tmp_path / "restored", _settings_for, unlock=unlock)
    assert not (tmp_path / "restored" / "custody.key").exists()  # the operator puts the words back


def test_an_encrypted_custody_key_is_backed_up_and_restored_and_opens_with_its_passphrase(
    settings: Settings, engine_app, dispatch_app, tmp_path: Path
) -> None:
    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    encrypt_in_place(settings.data_dir, lambda: "the passphrase")
    manifest = create_backup(
        settings, tmp_path / "backup", sealer=Sealer.with_passphrase("backup passphrase")
    )
    assert manifest["custodyKey"] == "encrypted"
    assert "custody.key" in {entry["path"] for entry in manifest["files"]}

    unlock = Unlock(passphrase=lambda: "backup passphrase")
    restore_backup(tmp_path / "backup", tmp_path / "restored", _settings_for, unlock=unlock)
    restored = tmp_path / "restored" / "custody.key"
    assert restored.read_bytes() == (settings.data_dir / "custody.key").read_bytes()
    opened = load_for(
        load_settings(
            {"data_dir": str(tmp_path / "restored")},
            environ={"APPLIANCE_CUSTODY_PASSPHRASE": "the passphrase"},
        )
    )
    assert opened is not None and opened.fingerprint == "73c5da0a"
