"""The audit log of administrative acts (issue 48): written in the act's transaction in both
services, read by owners (dispatch) and the administrator (CLI), hash-chained so that an entry
edited or removed by hand is found by `appliance audit verify`."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from appliance.common import audit
from appliance.common.db import connection, write_transaction
from appliance.dispatch.db import database as dispatch_database
from appliance.dispatch.models.audit import AuditAnchor, AuditEntry
from tests.conftest import BACKEND
from tests.dispatch.factory import make_company, make_member

ROOT = Path(__file__).resolve().parents[2]


def appliance(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    return subprocess.run(
        [sys.executable, "-m", "appliance", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=environment,
    )


def test_an_owners_acts_are_in_the_audit_log_with_who_what_before_and_after(
    dispatch_app, dispatch_client
) -> None:
    company = make_company("Arev Express")
    owner = make_member(dispatch_app, company, "owner", email="ani@arev.am")
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    other = make_company("Other Co")
    other_owner = make_member(dispatch_app, other, "owner")

    changed = dispatch_client.patch(
        f"/company/members/{dispatcher.user.id}", json={"role": "owner"}, headers=owner.headers
    )
    assert changed.status_code == 200, changed.json
    assert (
        dispatch_client.patch("/company", json={"brandColor": "#112233"}, headers=owner.headers).status_code
        == 200
    )
    key = dispatch_client.post("/company/integration-keys", json={"name": "Shop"}, headers=owner.headers)
    assert key.status_code == 201, key.json
    assert (
        dispatch_client.get(
            "/reports/orders.csv?from=2026-11-01&to=2026-11-02", headers=owner.headers
        ).status_code
        == 200
    )

    page = dispatch_client.get("/company/audit", headers=owner.headers)
    assert page.status_code == 200, page.json
    entries = page.json["entries"]
    assert [e["action"] for e in entries] == [
        "member.changed",
        "company.settings_changed",
        "integration_key.created",
        "report.exported",
    ]
    role = entries[0]
    assert role["actorKind"] == "user" and "ani@arev.am" in role["actor"]
    assert role["before"] == {"role": "dispatcher", "status": "active"}
    assert role["after"] == {"role": "owner", "status": "active"}
    assert role["origin"].startswith("http:")
    assert set(entries[1]["before"]) == {"brandColor"} and entries[1]["before"]["brandColor"] != "#112233"
    assert entries[1]["after"] == {"brandColor": "#112233"}
    assert page.json["next"] is None

    # Another company's owner reads none of it; a dispatcher reads nothing at all.
    assert dispatch_client.get("/company/audit", headers=other_owner.headers).json["entries"] == []
    helper = make_member(dispatch_app, company, "dispatcher")
    assert dispatch_client.get("/company/audit", headers=helper.headers).status_code == 403

    # Paged, and as CSV.
    first = dispatch_client.get("/company/audit?limit=2", headers=owner.headers).json
    rest = dispatch_client.get(f"/company/audit?after={first['next']}", headers=owner.headers).json
    assert [e["id"] for e in first["entries"] + rest["entries"]] == [e["id"] for e in entries]
    exported = dispatch_client.get("/company/audit.csv", headers=owner.headers)
    assert exported.status_code == 200 and exported.mimetype == "text/csv"
    rows = list(csv.reader(io.StringIO(exported.data.decode("utf-8-sig"))))
    assert rows[0][:5] == ["id", "at", "actor_kind", "actor", "action"]
    assert [r[4] for r in rows[1:]] == [e["action"] for e in entries]
    assert dispatch_client.get("/company/audit?limit=0", headers=owner.headers).status_code == 400


def test_the_chain_verifies_and_a_hand_edited_or_removed_entry_breaks_it(
    dispatch_app, dispatch_client, settings
) -> None:
    if BACKEND != "sqlite":
        pytest.skip("edits the SQLite file by hand")
    company = make_company()
    owner = make_member(dispatch_app, company, "owner")
    for color in ("#111111", "#222222", "#333333"):
        dispatch_client.patch("/company", json={"brandColor": color}, headers=owner.headers)
    verified = appliance(settings.data_dir, "audit", "verify", "--service", "dispatch", "--json")
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["dispatch"]["entries"] == 3

    # Whoever can write the file can drop the trigger, but not recompute the chain unnoticed.
    path = settings.data_dir / "dispatch.db"
    with sqlite3.connect(path) as db:
        db.execute("DROP TRIGGER audit_entry_no_update")
        second = db.execute("SELECT id FROM audit_entry ORDER BY id LIMIT 1 OFFSET 1").fetchone()[0]
        db.execute("UPDATE audit_entry SET after = ? WHERE id = ?", ('{"brandColor":"#999999"}', second))
    broken = appliance(settings.data_dir, "audit", "verify", "--service", "dispatch", "--json")
    assert broken.returncode == 1
    found = json.loads(broken.stdout)["dispatch"]
    assert found == {
        **found,
        "ok": False,
        "brokenAt": str(second),
        "reason": "was changed after it was written",
    }

    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM audit_entry WHERE id = ?", (second,))
    removed = appliance(settings.data_dir, "audit", "verify", "--service", "dispatch", "--json")
    assert removed.returncode == 1
    assert json.loads(removed.stdout)["dispatch"]["reason"] == "names another entry before it"


def test_the_database_refuses_to_change_an_entry(dispatch_app, dispatch_client) -> None:
    company = make_company()
    owner = make_member(dispatch_app, company, "owner")
    dispatch_client.patch("/company", json={"brandColor": "#123456"}, headers=owner.headers)
    refused = pytest.raises(Exception, match="append-only")
    with dispatch_app.app_context(), refused, write_transaction(dispatch_database):
        AuditEntry.update(action="nothing").execute()


def test_pruning_old_entries_moves_the_anchor_and_the_chain_still_verifies(
    dispatch_app, dispatch_client
) -> None:
    company = make_company()
    owner = make_member(dispatch_app, company, "owner")
    for color in ("#111111", "#222222", "#333333"):
        dispatch_client.patch("/company", json={"brandColor": color}, headers=owner.headers)
    with dispatch_app.app_context():
        entries = list(AuditEntry.select().order_by(AuditEntry.id))
        # Everything up to the second entry is older than the cutoff.
        cutoff = datetime.fromisoformat(entries[2].at)
        with write_transaction(dispatch_database):
            assert audit.prune(AuditEntry, AuditAnchor, cutoff) == 2
        assert AuditAnchor.get_by_id(1).hash == entries[1].hash
        verification = audit.verify(AuditEntry, AuditAnchor)
        assert verification.ok and verification.entries == 1
        with write_transaction(dispatch_database):
            assert audit.prune(AuditEntry, AuditAnchor, cutoff - timedelta(days=1)) == 0


def test_the_engines_administrator_acts_are_recorded_with_the_os_user(settings) -> None:
    data = settings.data_dir
    assert appliance(data, "operator", "create", "op_auditedoperator").returncode == 0
    assert appliance(data, "operator", "pause", "op_auditedoperator").returncode == 0
    listed = appliance(data, "audit", "list", "--service", "engine", "--json")
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)["entries"]
    assert [e["action"] for e in entries] == ["operator.created", "operator.paused"]
    assert all(e["actorKind"] == "administrator" and "@" in e["actor"] for e in entries)
    assert all(e["origin"].startswith("cli:") for e in entries)
    assert entries[1]["before"] == {"paused": False} and entries[1]["after"] == {"paused": True}
    assert "secret" not in json.dumps(entries[0]["after"]).replace("secretId", "")
    verified = appliance(data, "audit", "verify", "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["engine"]["ok"]


def test_the_engines_reconcile_job_removes_entries_past_their_retention_and_the_chain_verifies(
    engine_app,
) -> None:
    from appliance.common import clock
    from appliance.engine import audit as engine_audit
    from appliance.engine.db import database as engine_database
    from appliance.engine.treasury.job import ReconcileJob

    runtime = engine_app.extensions["engine"]
    start = clock.now()
    with engine_app.app_context(), connection(engine_database):
        for days in (800, 10):  # one entry past two years, one recent
            clock.freeze(start - timedelta(days=days))
            with write_transaction(engine_database):
                engine_audit.record("operator.paused", f"operator:op_old{days}")
        clock.freeze(None)
        job = ReconcileJob(
            runtime.chains, runtime.custody, interval=timedelta(hours=1), audit_retention=timedelta(days=730)
        )
        assert job.run_pass() == 1
        from appliance.engine.models.audit import AuditEntry

        assert [e.subject for e in AuditEntry.select()] == ["operator:op_old10"]
        assert engine_audit.verify().ok
