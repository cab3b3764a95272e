"""The payout pipeline with engine.db on a real PostgreSQL server: claims with FOR UPDATE SKIP
LOCKED, compare-and-set moves and nonce reservations under two racing workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.common import migrate
from appliance.engine.db import database
from appliance.engine.models import Broadcast
from tests.conftest import empty_postgres, postgres_url
from tests.engine.pipeline_harness import (
    ETHER,
    PAYOUT_WALLET,
    harness_settings,
    make_harness,
    race_two_workers,
)

pytestmark = pytest.mark.postgres


def test_two_workers_on_postgresql_pay_each_payout_once_with_consecutive_nonces(
    tmp_path: Path, template_dir: Path
) -> None:
    db = empty_postgres()
    migrate.apply(db, "migrations.engine")
    db.close_all()
    settings = harness_settings(tmp_path, template_dir, {}).replace(engine_database=postgres_url() or "")
    harness = make_harness(settings, lambda app: app.extensions["engine"].chains.get("eth_local").mine())
    chain = harness.app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, ETHER)
    for n in range(8):
        harness.submit(f"pyo_pgrace{n:04d}", 500 + n, destination=f"0x{0xF000 + n:040x}")
    race_two_workers(harness, [f"pyo_pgrace{n:04d}" for n in range(8)])
    for n in range(8):
        assert chain.balance(f"0x{0xF000 + n:040x}") == 500 + n
    with database.connection_context():
        assert sorted(int(b.nonce) for b in Broadcast.select()) == list(range(8))
    database.close_all()
