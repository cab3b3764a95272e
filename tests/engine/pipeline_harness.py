"""Drive the payout pipeline by hand in tests: submit through the signed API, run passes, mine."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from appliance.engine.db import database
from appliance.engine.models import Payout
from appliance.engine.payouts.pipeline import Pipeline, fee_ceilings
from appliance.settings import Settings, load_settings
from tests.engine.helpers import Signer, make_operator

# The standard BIP39 test mnemonic: payout wallet 0x9858EfFD…, fee wallet 0x6Fac4D18….
TEST_MNEMONIC = (
    "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
)
PAYOUT_WALLET = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
FEE_WALLET = "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"
ETHER = 10**18


class Harness:
    def __init__(self, app: Any, signer: Signer, pipeline: Pipeline, mine: Callable[[], None]) -> None:
        self.app = app
        self.signer = signer
        self.pipeline = pipeline
        self.mine = mine

    def submit(self, payout_id: str, amount: int, asset: str = "ETH", destination: str = "") -> None:
        response = self.signer.submit(
            payout_id, amount=str(amount), asset=asset, destination=destination or "0x" + "00" * 18 + "00d1"
        )
        assert response.status_code == 201, response.json

    def payout(self, payout_id: str) -> Payout:
        with database.connection_context():
            return Payout.get(Payout.payout_id == payout_id)

    def detail(self, payout_id: str) -> dict[str, Any]:
        response = self.signer.request("GET", f"/v1/payouts/{payout_id}")
        assert response.status_code == 200
        return response.json

    def run_pass(self) -> None:
        with database.connection_context():
            self.pipeline.run_pass()

    def drive(self, done: Callable[[], bool], *, mine: bool = True, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if time.monotonic() >= deadline:
                with database.connection_context():
                    state = [(p.payout_id, p.status, p.reason) for p in Payout.select()]
                pytest.fail(f"the pipeline did not get there in time: {state}")
            self.run_pass()
            if mine:
                self.mine()
            time.sleep(0.01)

    def until_status(self, payout_id: str, status: str, **kw: Any) -> None:
        self.drive(lambda: self.payout(payout_id).status == status, **kw)

    def skip_waits(self) -> None:
        """Make waiting payouts due now instead of sleeping through their back-off."""
        with database.connection_context():
            Payout.update(next_attempt_at=None).execute()


def harness_settings(settings: Settings, environ: dict[str, str]) -> Settings:
    """The suite's ``settings`` (their data directory and, on the PostgreSQL backend, the
    appliance.toml naming the test's databases) loaded with the harness's environment on top."""
    return load_settings(
        {"data_dir": str(settings.data_dir)},
        environ={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **environ},
    )


def make_harness(settings: Settings, mine: Callable[[Any], None], *, operator: bool = True) -> Harness:
    """``mine(app)`` makes the chain advance one block."""
    from appliance.engine.app import create_app

    app = create_app(settings)
    app.testing = True
    op = make_operator(app) if operator else {"operatorId": "op_alpha0001", "secret": ""}
    runtime = app.extensions["engine"]
    pipeline = Pipeline(
        runtime.chains,
        runtime.custody,
        lease=timedelta(seconds=1),
        poll=timedelta(0),
        data_dir=settings.data_dir,
        fee_ceilings=fee_ceilings(settings),
    )
    return Harness(
        app, Signer(app.test_client(), op["operatorId"], op["secret"]), pipeline, lambda: mine(app)
    )


def race_two_workers(harness: Harness, payout_ids: list[str], seconds: float = 60) -> None:
    """Drive the harness's pipeline while a second one, holding its own stale copies, runs in a
    thread over the same rows, until every payout is COMPLETED."""
    second = Pipeline(harness.pipeline.chains, harness.pipeline.custody, lease=harness.pipeline.queue.lease)
    stop = threading.Event()

    def other_worker() -> None:
        while not stop.is_set():
            with database.connection_context():
                second.run_pass()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        harness.drive(
            lambda: all(harness.payout(p).status == "COMPLETED" for p in payout_ids), seconds=seconds
        )
    finally:
        stop.set()
        thread.join()


def adopt_found(harness: Harness, by: str = "test-admin") -> int:
    """What an administrator does after a restore whose copy's transactions the engine no longer
    holds (issue 44, item 5): each transaction the fencing found and keeps for a decision that
    pays a REQUESTED payout exactly is adopted for it (`appliance payout adopt`). Returns how many."""
    from appliance.engine.models import ForeignTransaction
    from appliance.engine.outgoing.fencing import pays
    from appliance.engine.payouts.foreign import adopt

    chains = harness.app.extensions["engine"].chains
    adopted = 0
    with database.connection_context():
        for row in ForeignTransaction.select().where(ForeignTransaction.status == "pending"):
            paid = pays(chains, row.chain_id, bytes.fromhex(row.raw))
            if paid is None:
                continue
            for payout in Payout.select().where(
                (Payout.status == "REQUESTED")
                & (Payout.asset == paid[0])
                & (Payout.amount_minor == str(paid[2]))
            ):
                if str(payout.destination).lower() == paid[1].lower():
                    adopt(chains, row.chain_id, row.tx_hash, payout, by, "found after a restore")
                    adopted += 1
                    break
    return adopted


def drive_adopting(harness: Harness, done: Callable[[], bool], **kw: Any) -> None:
    """``drive``, adopting at each step what the fencing found (adopt_found)."""

    def step() -> bool:
        if adopt_found(harness):
            harness.skip_waits()  # the wallet signs again: no fenced back-off
        return done()

    harness.drive(step, **kw)
