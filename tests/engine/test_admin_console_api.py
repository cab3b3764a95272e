"""The engine administrator's console API (/admin/api): a password and a TOTP code each accepted
once, lockout after five failures, changes only with the session cookie and X-Admin-Request, and
every act in the audit log as the console's."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pyotp
import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.common import clock
from appliance.engine.db import database
from appliance.engine.models import Payout
from appliance.engine.models.audit import AuditEntry
from tests.engine.pipeline_harness import (
    ETHER,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)

OPERATOR = "op_alpha0001"
PASSWORD = "correct horse battery staple"
CHANGE = {"X-Admin-Request": "1"}


@pytest.fixture
def harness(settings) -> Harness:
    made = make_harness(
        harness_settings(settings, {}), lambda app: app.extensions["engine"].chains.get("eth_local").mine()
    )
    made.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, 10 * ETHER)
    return made


def appliance(harness: Harness, *args: str, **env: str) -> Any:
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    return CliRunner().invoke(
        cli, [*args, "--data-dir", data_dir, "--json"], env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **env}
    )


def enrol(harness: Harness) -> pyotp.TOTP:
    done = appliance(harness, "admin", "set-password", APPLIANCE_ADMIN_PASSWORD=PASSWORD)
    assert done.exit_code == 0, done.output
    enrolment = json.loads(done.output)
    assert enrolment["otpauthUri"].startswith("otpauth://totp/")
    return pyotp.TOTP(enrolment["totpSecret"])


def code_at(totp: pyotp.TOTP, steps_ahead: int = 0) -> str:
    return totp.at(clock.now() + timedelta(seconds=30 * steps_ahead))


def test_the_console_signs_in_with_the_password_and_a_fresh_code_only(harness: Harness) -> None:
    totp = enrol(harness)
    client = harness.app.test_client()
    assert client.get("/admin/api/overview").status_code == 401
    wrong_code = client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp, 5)})
    assert wrong_code.status_code == 401
    wrong_password = client.post(
        "/admin/api/session", json={"password": "not it at all", "code": code_at(totp)}
    )
    assert wrong_password.status_code == 401
    signed = client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)})
    assert signed.status_code == 200, signed.json
    cookie = signed.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/admin" in cookie
    assert client.get("/admin/api/overview").status_code == 200

    # The same code does not open a second session (it was used), and sign-out ends this one.
    other = harness.app.test_client()
    assert (
        other.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)}).status_code
        == 401
    )
    assert client.delete("/admin/api/session", headers=CHANGE).status_code == 204
    assert client.get("/admin/api/overview").status_code == 401


def test_five_failures_lock_the_sign_in_even_for_the_right_password(harness: Harness) -> None:
    totp = enrol(harness)
    client = harness.app.test_client()
    for _ in range(5):
        assert (
            client.post("/admin/api/session", json={"password": "wrong", "code": "000000"}).status_code == 401
        )
    locked = client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)})
    assert locked.status_code == 429 and locked.headers["Retry-After"] == "900"


def test_a_change_needs_the_header_and_is_audited_as_the_consoles(harness: Harness) -> None:
    totp = enrol(harness)
    client = harness.app.test_client()
    assert (
        client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)}).status_code
        == 200
    )
    assert client.post(f"/admin/api/operators/{OPERATOR}/pause").status_code == 403
    paused = client.post(f"/admin/api/operators/{OPERATOR}/pause", headers=CHANGE)
    assert paused.status_code == 200 and paused.json["paused"] is True
    assert client.post("/admin/api/operators/op_nobodyhere/pause", headers=CHANGE).status_code == 404
    with database.connection_context():
        entry = AuditEntry.select().where(AuditEntry.action == "operator.paused").get()
    assert entry.actor.startswith("administrator console (session ") and entry.origin.startswith("http:")


def test_a_payout_awaiting_approval_is_listed_and_approved_from_the_console(harness: Harness) -> None:
    totp = enrol(harness)
    done = appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-above", "100")
    assert done.exit_code == 0, done.output
    harness.submit("pyo_large00001", 2 * 10**15, destination="0x" + "00" * 18 + "00d2")
    client = harness.app.test_client()
    assert (
        client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)}).status_code
        == 200
    )
    overview = client.get("/admin/api/overview").json
    (operator,) = overview["operators"]
    assert operator["controls"]["limits"][0]["summary"] == "approval above 0.0000000000000001 ETH"
    credited = appliance(
        harness, "operator", "credit", OPERATOR, "--asset", "ETH", "--amount", "7", "--memo", "gift"
    )
    assert credited.exit_code == 0, credited.output
    entries = client.get(f"/admin/api/operators/{OPERATOR}/entries").json["entries"]
    assert (entries[0]["amount"], entries[0]["memo"]) == ("0.000000000000000007 ETH", "gift")
    assert client.get("/admin/api/operators/op_nobodyhere/entries").status_code == 404
    (waiting,) = overview["approvals"]
    assert waiting["payoutId"] == "pyo_large00001" and waiting["amount"] == "0.002 ETH"
    approved = client.post(f"/admin/api/payouts/{waiting['id']}/approve", headers=CHANGE)
    assert approved.status_code == 200, approved.json
    assert approved.json["decision"] == "approved"
    assert client.post(f"/admin/api/payouts/{waiting['id']}/approve", headers=CHANGE).status_code == 409
    with database.connection_context():
        assert Payout.get(Payout.payout_id == "pyo_large00001").status == "REQUESTED"
    actions = [e["action"] for e in client.get("/admin/api/overview").json["audit"]]
    assert "payout.approved" in actions
    assert client.get("/admin/api/overview").json["auditChain"]["ok"] is True


def test_a_transaction_the_engine_did_not_sign_is_listed_and_rejected_from_the_console(
    harness: Harness,
) -> None:
    totp = enrol(harness)
    runtime = harness.app.extensions["engine"]
    chain = runtime.chains.get("eth_local")
    harness.submit("pyo_beforeforeign", 4000)  # the engine's own first: it knows the wallet from here
    harness.until_status("pyo_beforeforeign", "COMPLETED")
    # Someone holding the key pays from the payout wallet at its next nonce.
    raw, stolen = runtime.custody.key.sign_transaction(
        0,
        0,
        {
            "chainId": chain.network_id,
            "nonce": chain.nonce(PAYOUT_WALLET),
            "to": "0x000000000000000000000000000000000000dEaD",
            "value": ETHER,
            "gas": 21_000,
            "maxFeePerGas": 10**10,
            "maxPriorityFeePerGas": 10**9,
            "type": 2,
        },
    )
    chain.send_raw_transaction(raw)
    chain.mine()
    harness.submit("pyo_afterforeign", 5000)
    for _ in range(3):
        harness.skip_waits()
        harness.run_pass()
    assert harness.payout("pyo_afterforeign").status == "REQUESTED"

    client = harness.app.test_client()
    assert (
        client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)}).status_code
        == 200
    )
    (found,) = client.get("/admin/api/overview").json["foreign"]
    assert found["txHash"] == stolen and found["role"] == "payout"
    wrong = client.post(
        f"/admin/api/foreign/eth_local/{stolen}/adopt", json={"payoutId": "pyo_afterforeign"}, headers=CHANGE
    )
    assert wrong.status_code == 409  # it pays 1 ETH to someone else, not this payout
    rejected = client.post(f"/admin/api/foreign/eth_local/{stolen}/reject", headers=CHANGE)
    assert rejected.status_code == 200, rejected.json
    assert rejected.json["status"] == "rejected" and rejected.json["walletReleased"] is True
    assert client.get("/admin/api/overview").json["foreign"] == []
    actions = [e["action"] for e in client.get("/admin/api/overview").json["audit"]]
    assert "foreign.rejected" in actions
    # The wallet signs again: the payout leaves REQUESTED (signed, then sent).
    harness.drive(lambda: harness.payout("pyo_afterforeign").status != "REQUESTED", seconds=90)


def test_the_console_shows_each_kept_backups_latest_drill_and_says_when_none_are_scheduled(
    harness: Harness, settings, dispatch_app
) -> None:
    """The drills are the dispatch database's (appliance/backups/history.py): the engine's console
    reads them through a connection of its own."""
    from appliance.backups import history
    from appliance.common.db import connection
    from appliance.dispatch.db import database as dispatch_database

    totp = enrol(harness)
    client = harness.app.test_client()
    assert (
        client.post("/admin/api/session", json={"password": PASSWORD, "code": code_at(totp)}).status_code
        == 200
    )
    assert client.get("/admin/api/overview").json["backups"] == {"scheduled": False, "runs": [], "drills": []}

    with connection(dispatch_database):
        history.record_run("appliance-20261128T0900Z", clock.now(), passed=True, destinations="dir", kept=10)
        history.record_drill(
            "appliance-20261128T0900Z", "dir", passed=False, detail="engine.db: checksum", seconds=1, kept=10
        )
    runtime = harness.app.extensions["engine"]
    runtime.settings = runtime.settings.replace(backup_every_hours=6.0)
    backups = client.get("/admin/api/overview").json["backups"]
    assert backups["scheduled"] is True and backups["runs"][0]["name"] == "appliance-20261128T0900Z"
    assert backups["drills"] == [
        {
            **backups["drills"][0],
            "backup": "appliance-20261128T0900Z",
            "passed": False,
            "detail": "engine.db: checksum",
        }
    ]
