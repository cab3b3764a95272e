"""Issue 41: a backup does not open the live install. Every file of a backup is sealed under a
passphrase or an age recipient; sent mail (the outbox) stays out; and a session ends on the server
at its expiry, so even a well-signed access token of an expired session is refused.

The attacker holds only the files of a backup directory, and the live server runs: from them they
try to read appliance.key, forge an access token for a signed-in owner's session, unseal an
operator's HMAC secret and sign payout requests with it, and find a sign-in link in the mail."""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.auth.tokens import AccessClaims, issue_access_token
from appliance.engine.auth.operators import decrypt_secret
from appliance.engine.client import EngineClient
from tests.conftest import BACKEND
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail
from tests.engine.helpers import make_operator

PASSWORD = "owner password 1"
PASSPHRASE = "a backup passphrase nobody guesses"

sqlite_only = pytest.mark.skipif(BACKEND != "sqlite", reason="the SQLite files of a data directory")


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def live(settings, dispatch_app, engine_app):
    """A data directory in use: an owner signed in (with a password), an engine operator with a
    payout, and a sign-in link mailed to the outbox (no SMTP server set)."""
    company = make_company("Arev")
    owner = make_member(
        dispatch_app, company, "owner", email="owner@example.am", password_hash=hash_password(PASSWORD)
    )
    client = dispatch_app.test_client()
    assert client.post("/auth/magic-link", json={"email": "owner@example.am"}).status_code == 202
    (eml,) = sent_mail(dispatch_app)  # the mail worker sends it (issue 41 item 7)
    token = re.search(r"/login\?token=([A-Za-z0-9_-]+)", mail_text(eml)).group(1)
    operator = make_operator(engine_app)
    from tests.engine.helpers import Signer, payout_request

    signer = Signer(engine_app.test_client(), operator["operatorId"], operator["secret"])
    answer = signer.request("POST", "/v1/payouts", payout_request("pyo_backup0001"), key="backup-0001")
    assert answer.status_code in (200, 201, 202), answer.get_data(as_text=True)
    return {"owner": owner, "operator": operator, "link_token": token, "settings": settings}


# -- what a backup alone opens ---------------------------------------------------------------------


def _key_in(backup: Path) -> bytes | None:
    """appliance.key as the attacker finds it in the backup: 32 bytes, base64, or nothing usable."""
    path = backup / "appliance.key"
    if not path.is_file():
        return None
    try:
        raw = base64.b64decode(path.read_bytes().strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def _rows(database: Path, query: str) -> list[tuple]:
    """The rows of ``query`` in a backup's database file, [] when it is not a readable database."""
    if not database.is_file():
        return []
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            return conn.execute(query).fetchall()
    except sqlite3.DatabaseError:
        return []


def _what_a_backup_opens(backup: Path, dispatch: str, engine: str) -> list[str]:
    """Every way into the live server the backup's files gave (the empty list: none)."""
    opened: list[str] = []
    key = _key_in(backup)
    sessions = _rows(
        backup / "dispatch.db",
        "SELECT s.id, m.user_id, m.company_id, m.id, m.role, m.session_epoch FROM auth_session s "
        "JOIN membership m ON m.user_id = s.user_id AND m.company_id = s.company_id "
        "WHERE s.revoked_at IS NULL",
    )
    if key is not None:
        for session_id, user_id, company_id, membership_id, role, epoch in sessions:
            claims = AccessClaims(user_id, company_id, membership_id, role, epoch, session_id)
            forged = issue_access_token(key, claims, 900)
            answer = requests.get(f"{dispatch}/me", headers={"Authorization": f"Bearer {forged}"}, timeout=30)
            if answer.status_code == 200:
                opened.append(f"a forged access token for session {session_id}: GET /me {answer.status_code}")
    secrets = _rows(backup / "engine.db", "SELECT operator_id, id, ciphertext FROM operator_secret")
    if key is not None:
        for operator_id, secret_id, blob in secrets:
            secret = decrypt_secret(key, operator_id, secret_id, blob)
            client = EngineClient(engine, operator_id, secret, max_attempts=1)
            answer = client.request("GET", "/v1/payouts")
            if answer.status_code == 200:
                opened.append(f"operator {operator_id}'s unsealed secret: GET /v1/payouts 200")
    return opened


def _files_holding(backup: Path, secret: bytes) -> list[str]:
    return [
        p.relative_to(backup).as_posix()
        for p in sorted(backup.rglob("*"))
        if p.is_file() and secret in p.read_bytes()
    ]


@sqlite_only
@pytest.mark.server
def test_someone_holding_only_a_backup_can_neither_act_as_a_user_nor_sign_as_an_operator(
    live, tmp_path: Path
) -> None:
    from tests.crash.harness import start_server

    settings = live["settings"]
    made = _cli(
        "backup", "--out", str(tmp_path / "backup"), "--data-dir", str(settings.data_dir), "--json",
        env={"APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    backup = tmp_path / "backup"
    live_key = (settings.data_dir / "appliance.key").read_bytes().strip()

    server = start_server(settings.data_dir, "--processes", "1")
    try:
        # The live server takes a token signed with the live key (the attack below is sound).
        assert (
            requests.get(f"{server.dispatch}/me", headers=live["owner"].headers, timeout=30).status_code
            == 200
        )
        assert _what_a_backup_opens(backup, server.dispatch, server.engine) == []
    finally:
        server.stop()
    assert _key_in(backup) is None
    for secret in (live_key, base64.b64decode(live_key), live["operator"]["secret"].encode()):
        assert _files_holding(backup, secret) == []
    # Sent mail stays out: no sign-in link of the outbox is anywhere in the backup.
    assert not (backup / "outbox").exists()
    assert _files_holding(backup, live["link_token"].encode()) == []
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["encryption"]["scheme"] == "passphrase"
    assert not any(entry["path"].startswith("outbox/") for entry in manifest["files"])


# -- server-side session expiry --------------------------------------------------------------------


def _forged_token(app, member, session_id: str) -> str:
    """An access token for ``session_id`` signed with the install's own key, issued now."""
    membership = member.membership
    claims = AccessClaims(
        membership.user_id,
        membership.company_id,
        membership.id,
        membership.role,
        membership.session_epoch,
        session_id,
    )
    return issue_access_token(app.extensions["dispatch"].master_key, claims, 900)


def _session_of(member) -> str:
    from appliance.dispatch.models import AuthSession

    return AuthSession.select().where(AuthSession.user == member.user.id).get().id


def test_a_session_past_its_expiry_is_refused_even_with_a_validly_signed_access_token(
    dispatch_app, settings
) -> None:
    clock.freeze(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    member = make_member(dispatch_app, make_company(), "owner")
    session_id = _session_of(member)
    client = dispatch_app.test_client()
    clock.advance(timedelta(days=settings.refresh_token_days) - timedelta(minutes=1))
    live = _forged_token(dispatch_app, member, session_id)
    assert client.get("/me", headers={"Authorization": f"Bearer {live}"}).status_code == 200

    clock.advance(timedelta(minutes=2))  # the session's refresh token has expired: the session too
    forged = _forged_token(dispatch_app, member, session_id)
    answer = client.get("/me", headers={"Authorization": f"Bearer {forged}"})
    assert answer.status_code == 401, answer.get_data(as_text=True)
    assert client.post("/auth/refresh", json={"refreshToken": member.refresh_token}).status_code == 401


def test_a_refreshed_session_lives_on_but_never_past_its_absolute_lifetime(dispatch_app, settings) -> None:
    clock.freeze(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    member = make_member(dispatch_app, make_company(), "dispatcher")
    session_id = _session_of(member)
    client = dispatch_app.test_client()
    refresh = member.refresh_token
    step = timedelta(days=settings.refresh_token_days - 1)
    elapsed = timedelta(0)
    while elapsed + step < timedelta(days=settings.session_max_days):
        clock.advance(step)
        elapsed += step
        answer = client.post("/auth/refresh", json={"refreshToken": refresh})
        assert answer.status_code == 200, (elapsed, answer.get_data(as_text=True))
        refresh = answer.get_json()["refreshToken"]
        token = _forged_token(dispatch_app, member, session_id)
        assert client.get("/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    clock.advance(timedelta(days=settings.session_max_days) - elapsed + timedelta(seconds=1))
    token = _forged_token(dispatch_app, member, session_id)
    assert client.get("/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert client.post("/auth/refresh", json={"refreshToken": refresh}).status_code == 401


# -- restore with the passphrase or the identity ---------------------------------------------------


def _keys_for(mode: str, tmp_path: Path) -> tuple[list[str], list[str], list[str]]:
    """(backup arguments, restore arguments, wrong restore arguments) for ``mode``."""
    from appliance.common.sealing import new_identity

    if mode == "passphrase":
        right, wrong = tmp_path / "passphrase", tmp_path / "wrong"
        right.write_text(PASSPHRASE + "\n")
        wrong.write_text("not the passphrase\n")
        return (
            ["--passphrase-file", str(right)],
            ["--passphrase-file", str(right)],
            ["--passphrase-file", str(wrong)],
        )
    identity, recipient = new_identity()
    other, _ = new_identity()
    (tmp_path / "identity.txt").write_text(f"# created: now\n# public key: {recipient}\n{identity}\n")
    (tmp_path / "other.txt").write_text(f"{other}\n")
    return (
        ["--recipient", recipient],
        ["--identity", str(tmp_path / "identity.txt")],
        ["--identity", str(tmp_path / "other.txt")],
    )


@sqlite_only
@pytest.mark.server
@pytest.mark.parametrize("mode", ["passphrase", "recipient"])
def test_an_encrypted_backup_restores_with_its_key_and_serves_as_before_and_a_wrong_key_writes_nothing(
    live, tmp_path: Path, mode: str
) -> None:
    from tests.crash.harness import start_server

    settings = live["settings"]
    sealing, opening, wrong = _keys_for(mode, tmp_path)
    made = _cli("backup", "--out", str(tmp_path / "backup"), "--data-dir", str(settings.data_dir), *sealing)
    assert made.returncode == 0, made.stderr
    assert "warning" not in made.stderr

    refused = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "target-wrong"), *wrong)
    assert refused.returncode == 1
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("error: the backup is encrypted and cannot be opened: ")
    assert not (tmp_path / "target-wrong").exists()
    nothing = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "none"))
    assert nothing.returncode == 1 and "error: the backup is encrypted" in nothing.stderr
    assert not (tmp_path / "none").exists()

    restored = tmp_path / "restored"
    done = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(restored), "--json", *opening)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["encryption"] == ("passphrase" if mode == "passphrase" else "age-x25519")
    assert (restored / "appliance.key").read_bytes() == (settings.data_dir / "appliance.key").read_bytes()
    server = start_server(restored, "--processes", "1")
    try:
        signed_in = requests.post(
            f"{server.dispatch}/auth/login",
            json={"email": "owner@example.am", "password": PASSWORD},
            timeout=30,
        )
        assert signed_in.status_code == 200, signed_in.text
        me = requests.get(
            f"{server.dispatch}/me",
            headers={"Authorization": f"Bearer {signed_in.json()['accessToken']}"},
            timeout=30,
        )
        assert me.status_code == 200 and me.json()["company"]["name"] == "Arev"
        operator = live["operator"]
        client = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
        assert client.get_payout("pyo_backup0001")["payoutId"] == "pyo_backup0001"
    finally:
        server.stop()


@sqlite_only
def test_a_tampered_encrypted_backup_is_refused_and_writes_nothing(live, tmp_path: Path) -> None:
    settings = live["settings"]
    env = {"APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE}
    assert (
        _cli(
            "backup", "--out", str(tmp_path / "backup"), "--data-dir", str(settings.data_dir), env=env
        ).returncode
        == 0
    )
    manifest_path = tmp_path / "backup" / "manifest.json"
    original = manifest_path.read_text()
    manifest = json.loads(original)
    manifest["chainHeights"] = {key: 10**9 for key in manifest["chainHeights"]} or {"eth-local": 10**9}
    manifest_path.write_text(json.dumps(manifest))
    done = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "a"), env=env)
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == "error: the backup is damaged: its manifest was altered (its MAC does not match)"
    )
    assert not (tmp_path / "a").exists()

    manifest_path.write_text(original)
    with open(tmp_path / "backup" / "engine.db", "r+b") as handle:
        handle.seek(200)
        byte = handle.read(1)
        handle.seek(200)
        handle.write(bytes([byte[0] ^ 1]))
    done = _cli("restore", str(tmp_path / "backup"), "--data-dir", str(tmp_path / "b"), env=env)
    assert done.returncode == 1
    assert (
        "error: engine.db does not match its checksum in the manifest: the backup is damaged" in done.stderr
    )
    assert list((tmp_path / "b").iterdir()) == []


@sqlite_only
def test_a_backup_is_encrypted_unless_no_encryption_is_asked_for_and_then_it_warns(
    live, tmp_path: Path
) -> None:
    data_dir = str(live["settings"].data_dir)
    refused = _cli("backup", "--out", str(tmp_path / "b1"), "--data-dir", data_dir)
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: a backup is encrypted: give --recipient age1")
    assert not (tmp_path / "b1").exists()
    both = _cli(
        "backup", "--out", str(tmp_path / "b2"), "--data-dir", data_dir, "--recipient", "x", "--no-encryption"
    )
    assert both.returncode == 2 and "give one of" in both.stderr

    clear = _cli("backup", "--out", str(tmp_path / "b3"), "--data-dir", data_dir, "--no-encryption", "--json")
    assert clear.returncode == 0, clear.stderr
    assert json.loads(clear.stdout)["encryption"] is None
    assert "warning: this backup is not encrypted" in clear.stderr
    assert not (tmp_path / "b3" / "outbox").exists()  # sent mail stays out of a clear one too
    restored = _cli("restore", str(tmp_path / "b3"), "--data-dir", str(tmp_path / "r3"), "--json")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["encryption"] is None


@sqlite_only
def test_a_clear_backup_put_where_an_encrypted_one_was_is_refused_when_its_passphrase_is_given(
    live, tmp_path: Path
) -> None:
    """Someone who can write where backups are kept swaps in a backup in the clear (their own
    data, their own keys): a restore or a verify given the passphrase must not take it silently."""
    data_dir = str(live["settings"].data_dir)
    swapped = tmp_path / "nightly"
    made = _cli("backup", "--out", str(swapped), "--data-dir", data_dir, "--no-encryption")
    assert made.returncode == 0, made.stderr
    secret = tmp_path / "passphrase.txt"
    secret.write_text(PASSPHRASE)
    refusal = "error: the backup is not encrypted, although a passphrase or identity was given"
    given_ways = {
        "variable": ([], {"APPLIANCE_BACKUP_PASSPHRASE": PASSPHRASE}),
        "file": (["--passphrase-file", str(secret)], None),
    }
    for how, (options, env) in given_ways.items():
        target = tmp_path / f"restored-{how}"
        done = _cli("restore", str(swapped), "--data-dir", str(target), *options, env=env)
        assert done.returncode == 1, done.stdout
        assert refusal in done.stderr
        assert not target.exists()
    verified = _cli(
        "backup", "verify", str(swapped), "--data-dir", data_dir, "--passphrase-file", str(secret)
    )
    assert verified.returncode == 1
    assert refusal[len("error: ") :] in verified.stdout + verified.stderr
    allowed = _cli(
        "restore", str(swapped), "--data-dir", str(tmp_path / "allowed"), "--allow-unencrypted", "--json",
        env=given_ways["variable"][1],
    )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["encryption"] is None
