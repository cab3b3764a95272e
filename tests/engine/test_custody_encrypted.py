"""custody.key encrypted at rest (scrypt and AES-256-GCM under a passphrase; age files of the first
version still opened and rewritten): `custody init --encrypt`, `custody encrypt`, `custody
fingerprint`, and where the passphrase comes from (the environment, a file as systemd's
LoadCredential= gives one, a prompt on a terminal, never a pipe)."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pyrage
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from appliance.cli import cli
from appliance.cli import custody as custody_cli
from appliance.cli.admin import migrate_all
from appliance.cli.serve import start_signer
from appliance.engine.custody import Custody
from appliance.engine.custody_file import CustodyError, CustodyPassphraseError, decrypt_words, load_for
from appliance.engine.signer.client import SignerClient
from appliance.settings import SettingsError, load_settings
from tests.engine.pipeline_harness import PAYOUT_WALLET, TEST_MNEMONIC

PASSPHRASE = "correct horse battery staple"
SEALED = '{"format": "appliance-custody-key/1"'


def open_independently(data: bytes, passphrase: str) -> str:
    """The file opened with the standard primitives alone, as its format is documented."""
    document = json.loads(data)
    header = {key: value for key, value in document.items() if key != "ciphertext"}
    key = Scrypt(
        salt=base64.b64decode(header["salt"]), length=32, n=header["n"], r=header["r"], p=header["p"]
    ).derive(passphrase.encode())
    aad = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    return (
        AESGCM(key)
        .decrypt(base64.b64decode(header["nonce"]), base64.b64decode(document["ciphertext"]), aad)
        .decode()
    )


def run(data_dir: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None):
    """The command as an operator runs it; the APPLIANCE_* environment is only what ``env`` says."""
    environment = {"APPLIANCE_CUSTODY_PASSPHRASE": None, "APPLIANCE_CUSTODY_PASSPHRASE_FILE": None}
    return CliRunner().invoke(
        cli, [*args, "--data-dir", str(data_dir)], env={**environment, **(env or {})}, input=stdin
    )


def with_passphrase(passphrase: str = PASSPHRASE) -> dict[str, str]:
    return {"APPLIANCE_CUSTODY_PASSPHRASE": passphrase}


def test_init_encrypt_writes_only_ciphertext_0600_and_the_fingerprint_needs_the_passphrase(
    tmp_path: Path,
) -> None:
    made = run(tmp_path, "custody", "init", "--encrypt", "--json", env=with_passphrase())
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    assert created["created"] is True and created["encrypted"] is True

    key = tmp_path / "custody.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    text = key.read_text()
    assert text.startswith(SEALED)
    header = json.loads(text)
    assert (header["kdf"], header["n"], header["r"], header["p"], header["cipher"]) == (
        "scrypt",
        2**17,
        8,
        1,
        "aes-256-gcm",
    )
    words = open_independently(key.read_bytes(), PASSPHRASE).split()
    assert len(words) == 24 and " ".join(words) not in text
    assert Custody(" ".join(words)).fingerprint == created["fingerprint"]

    shown = run(tmp_path, "custody", "fingerprint", "--json", env=with_passphrase())
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == {
        "fingerprint": created["fingerprint"],
        "encrypted": True,
        "source": "encrypted",
    }

    # Standard input is no terminal here: nobody is asked, and the error says what to give.
    missing = run(tmp_path, "custody", "fingerprint", "--json", stdin="guess\n")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("error: custody key: custody.key is encrypted and no passphrase")
    assert "APPLIANCE_CUSTODY_PASSPHRASE" in missing.stderr and "custody_passphrase_file" in missing.stderr

    wrong = run(tmp_path, "custody", "fingerprint", "--json", env=with_passphrase("not it"))
    assert wrong.exit_code == 1 and wrong.stdout == ""
    assert wrong.stderr == (
        "error: custody key: the passphrase does not open custody.key (not the one it was encrypted under)\n"
    )


def test_the_passphrase_file_of_a_systemd_credential_opens_the_key_without_its_final_newline(
    tmp_path: Path,
) -> None:
    credential = tmp_path / "credentials" / "custody-passphrase"
    credential.parent.mkdir()
    credential.write_text(PASSPHRASE + "\n")
    env = {"APPLIANCE_CUSTODY_PASSPHRASE_FILE": str(credential)}
    made = run(tmp_path / "data", "custody", "init", "--encrypt", "--json", env=env)
    assert made.exit_code == 0, made.output
    opened = load_for(load_settings({"data_dir": str(tmp_path / "data")}, environ=with_passphrase()))
    assert opened is not None and opened.fingerprint == json.loads(made.stdout)["fingerprint"]

    credential.write_text("\n")
    empty = run(tmp_path / "data", "custody", "fingerprint", env=env)
    assert empty.exit_code == 1
    assert empty.stderr == f"error: custody key: custody_passphrase_file {credential} is empty\n"
    credential.unlink()
    gone = run(tmp_path / "data", "custody", "fingerprint", env=env)
    assert gone.exit_code == 1 and "No such file or directory" in gone.stderr


def test_on_a_terminal_the_passphrase_is_asked_twice_to_encrypt_and_once_to_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(custody_cli, "stdin_is_terminal", lambda: True)
    mistyped = run(tmp_path, "custody", "init", "--encrypt", stdin=f"{PASSPHRASE}\nother\n")
    assert mistyped.exit_code != 0 and not (tmp_path / "custody.key").exists()

    made = run(tmp_path, "custody", "init", "--encrypt", "--json", stdin=f"{PASSPHRASE}\n{PASSPHRASE}\n")
    assert made.exit_code == 0, made.output
    assert PASSPHRASE not in made.output  # typed without echo
    fingerprint = json.loads(made.stdout)["fingerprint"]
    shown = run(tmp_path, "custody", "fingerprint", "--json", stdin=f"{PASSPHRASE}\n")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["fingerprint"] == fingerprint


def test_custody_encrypt_converts_a_plain_key_in_place_keeping_every_address(tmp_path: Path) -> None:
    key = tmp_path / "custody.key"
    key.write_text(TEST_MNEMONIC + "\n")
    key.chmod(0o644)  # as a hand-made copy might be

    converted = run(tmp_path, "custody", "encrypt", "--json", env=with_passphrase())
    assert converted.exit_code == 0, converted.output
    assert json.loads(converted.stdout) == {"converted": True, "fingerprint": "73c5da0a", "encrypted": True}
    assert key.read_text().startswith(SEALED) and "abandon" not in key.read_text()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["custody.key"]  # no temporary file left

    opened = load_for(load_settings({"data_dir": str(tmp_path)}, environ=with_passphrase()))
    assert opened is not None and opened.encrypted and opened.payout_address == PAYOUT_WALLET

    before = key.read_bytes()
    again = run(tmp_path, "custody", "encrypt", "--json", env=with_passphrase())
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["converted"] is False and key.read_bytes() == before
    wrong = run(tmp_path, "custody", "encrypt", env=with_passphrase("not it"))
    assert wrong.exit_code == 1 and key.read_bytes() == before


def test_custody_encrypt_refuses_a_damaged_key_or_none_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    none = run(tmp_path, "custody", "encrypt", env=with_passphrase())
    assert none.exit_code == 1 and "there is no custody.key" in none.stderr
    key = tmp_path / "custody.key"
    key.write_text("abandon abandon\n")
    damaged = run(tmp_path, "custody", "encrypt", env=with_passphrase())
    assert damaged.exit_code == 1 and "not a valid BIP39 mnemonic" in damaged.stderr
    assert key.read_text() == "abandon abandon\n"


def test_serve_has_its_signers_keeper_ask_on_a_terminal_once_and_never_holds_the_passphrase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(tmp_path, "custody", "init", "--encrypt", env=with_passphrase()).exit_code == 0
    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    with pytest.raises(CustodyPassphraseError, match="no passphrase was given"):
        start_signer(settings)  # standard input is no terminal here

    asked = tmp_path / "asked"  # written by the keeper, a process of its own

    def prompt(*args: object, **kwargs: object) -> str:
        with asked.open("a") as record:
            record.write(f"{os.getpid()}\n")
        return PASSPHRASE

    monkeypatch.setattr(custody_cli, "stdin_is_terminal", lambda: True)
    monkeypatch.setattr(custody_cli.click, "prompt", prompt)
    migrate_all(settings, ["engine"])  # as serve does first: the signer checks the fingerprint
    keeper = start_signer(settings)
    try:
        assert keeper is not None
        assert asked.read_text() == f"{keeper.pid}\n"  # asked once, by the keeper, not here
        described = SignerClient(keeper.path).describe()
        assert described["source"] == "encrypted" and described["refusal"] is None
        assert settings.custody_passphrase == "" and PASSPHRASE not in repr(settings)
    finally:
        if keeper is not None:
            keeper.stop()
    assert not keeper.path.exists()


def test_the_passphrase_is_refused_in_the_settings_file_beside_the_key(tmp_path: Path) -> None:
    (tmp_path / "appliance.toml").write_text(f'custody_passphrase = "{PASSPHRASE}"\n')
    with pytest.raises(SettingsError, match="custody_passphrase is not kept in the settings file"):
        load_settings({"data_dir": str(tmp_path)}, environ={})


def test_an_age_file_of_the_first_version_opens_and_custody_encrypt_rewrites_it_in_the_fixed_format(
    tmp_path: Path,
) -> None:
    key = tmp_path / "custody.key"
    key.write_bytes(
        bytes(pyrage.passphrase.encrypt((TEST_MNEMONIC + "\n").encode(), PASSPHRASE, armored=True))
    )
    key.chmod(0o600)
    opened = load_for(load_settings({"data_dir": str(tmp_path)}, environ=with_passphrase()))
    assert opened is not None and opened.encrypted and opened.payout_address == PAYOUT_WALLET

    converted = run(tmp_path, "custody", "encrypt", "--json", env=with_passphrase())
    assert converted.exit_code == 0, converted.output
    assert json.loads(converted.stdout) == {"converted": True, "fingerprint": "73c5da0a", "encrypted": True}
    assert key.read_text().startswith(SEALED)
    assert open_independently(key.read_bytes(), PASSPHRASE).split() == TEST_MNEMONIC.split()
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_a_key_file_asking_for_scrypt_work_beyond_the_bounds_or_altered_is_refused(tmp_path: Path) -> None:
    made = run(tmp_path, "custody", "init", "--encrypt", "--json", env=with_passphrase())
    assert made.exit_code == 0, made.output
    document = json.loads((tmp_path / "custody.key").read_text())

    greedy = {**document, "n": 2**30}  # 128 GB of memory: refused before any work
    with pytest.raises(CustodyError, match="beyond the bounds"):
        decrypt_words(json.dumps(greedy).encode(), PASSPHRASE)
    # The parameters are authenticated with the words: a file altered in its header does not open.
    altered = {**document, "nonce": base64.b64encode(b"\0" * 12).decode()}
    with pytest.raises(CustodyPassphraseError):
        decrypt_words(json.dumps(altered).encode(), PASSPHRASE)
    damaged = {key: value for key, value in document.items() if key != "salt"}
    with pytest.raises(CustodyError, match="damaged"):
        decrypt_words(json.dumps(damaged).encode(), PASSPHRASE)
