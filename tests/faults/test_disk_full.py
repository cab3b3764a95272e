"""A full disk under a stream of writes (issue 32): the data directory on a 24 MB tmpfs, filled up
while GPS batches arrive. Every write is answered 202 or 507 (never 500), with a clear detail; the
fault is logged once, not once per request, and counted in /metrics; the `disk` readiness check
fails; reads and signed-in requests still work; once space returns, writes succeed again by
themselves and every acknowledged point is stored."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from appliance.common import faults
from appliance.common.passwords import hash_password
from appliance.settings import load_settings
from tests.conftest import BACKEND, TEMPLATE_FILES
from tests.dispatch.factory import make_company, make_member
from tests.faults.small_disk import fill, mounted_tmpfs

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(BACKEND != "sqlite", reason="fills the filesystem under the SQLite files"),
]

PASSWORD = "correct-horse-battery"


@pytest.fixture
def small_data_dir(tmp_path, template_dir):
    with mounted_tmpfs(tmp_path / "disk", size_mb=24) as mount:
        data = mount / "data"
        data.mkdir()
        for name in TEMPLATE_FILES:
            shutil.copy2(template_dir / name, data / name)
        yield data


@pytest.fixture(autouse=True)
def _health_never_kept(monkeypatch):
    """Each /healthz probes afresh: the health cache's clock moves a minute per reading."""
    moments = iter(range(0, 10**9, 60))
    monkeypatch.setattr("appliance.common.health.monotonic", lambda: float(next(moments)))


@pytest.fixture
def app(small_data_dir):
    from appliance.dispatch.app import create_app

    faults.reset()
    settings = load_settings({"data_dir": str(small_data_dir), "min_free_disk_mb": 4}, environ={})
    app = create_app(settings)
    app.testing = True
    return app


def _batch(start: datetime, index: int) -> dict:
    return {
        "points": [
            {
                "lat": 40.18 + (index % 100) / 10000,
                "lon": 44.51,
                "capturedAt": (start + timedelta(seconds=index * 50 + i)).isoformat().replace("+00:00", "Z"),
                "source": "x" * 40,
            }
            for i in range(50)
        ]
    }


def test_a_full_disk_answers_507_once_logged_and_recovers_with_nothing_acknowledged_lost(
    app, small_data_dir, caplog
) -> None:
    client = app.test_client()
    company = make_company("Arev")
    courier = make_member(app, company, "courier")
    make_member(app, company, "owner", email="ani@example.am", password_hash=hash_password(PASSWORD))
    # Recent stamps: the serving processes' housekeeping pass deletes GPS points older than the
    # retention (90 days) but each courier's latest, and a pass that ran after the first points
    # of a January stamp had been acknowledged removed them (CI, a loaded machine).
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    acknowledged: list[int] = []

    def send(index: int) -> int:
        response = client.post("/courier/location", json=_batch(start, index), headers=courier.headers)
        assert response.status_code in {202, 507}, response.get_data(as_text=True)
        if response.status_code == 202:
            acknowledged.append(index)
        else:
            body = response.json
            assert response.mimetype == "application/problem+json"
            assert "disk is full" in body["detail"] and "nothing was saved" in body["detail"]
            assert body["code"] == "disk_full"
        return response.status_code

    assert send(0) == 202
    assert client.get("/healthz").json["checks"]["disk"]["status"] == "pass"

    # Fill the disk, leaving a little room so that some writes still pass before SQLite fails.
    filler = small_data_dir.parent / "filler"
    fill(filler, leave_bytes=256 * 1024)
    assert client.get("/healthz").json["checks"]["disk"]["status"] == "fail"  # before SQLite fails
    caplog.set_level(logging.INFO)
    statuses = [send(index) for index in range(1, 120)]
    refused = statuses.count(507)
    assert refused >= 20, statuses  # the disk did fill up
    fault_lines = [r for r in caplog.records if r.name == "appliance.faults"]
    assert len(fault_lines) == 1 and fault_lines[0].exc_info is None  # one line, no traceback
    assert not [r for r in caplog.records if r.name == "appliance.http" and r.levelno >= logging.ERROR]
    metrics = client.get("/metrics").get_data(as_text=True)
    assert f'appliance_faults_total{{fault="disk_full"}} {float(refused)}' in metrics
    assert 'appliance_fault_active{fault="disk_full"} 1.0' in metrics

    # Reads and signed-in requests need no write: they go on.
    assert client.get("/courier/me", headers=courier.headers).status_code == 200
    assert client.get("/courier/location/current", headers=courier.headers).status_code == 200
    # A password sign-in writes its session: a clear 507, never a 500.
    login = client.post("/auth/login", json={"email": "ani@example.am", "password": PASSWORD})
    assert login.status_code == 507 and login.json["code"] == "disk_full"

    # Space comes back: the same service writes again, with no restart.
    filler.unlink()
    assert client.get("/healthz").json["checks"]["disk"]["status"] == "pass"
    assert send(500) == 202
    again = client.post("/auth/login", json={"email": "ani@example.am", "password": PASSWORD})
    assert again.status_code == 200

    database = sqlite3.connect(small_data_dir / "dispatch.db")
    try:
        assert database.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = database.execute(
            "SELECT COUNT(*) FROM courier_location WHERE courier_id = ?", (courier.courier.id,)
        ).fetchone()[0]
    finally:
        database.close()
    assert stored == 50 * len(acknowledged)  # every acknowledged point, none of the refused ones
