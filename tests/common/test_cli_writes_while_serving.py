"""Every writing command of the administrator's CLI succeeds beside a busy server (issue 26, item 4).

A real `appliance serve` (one serving process with its workers: the payout pipeline, the deposit
watcher, the embedded chain's miner) takes GPS batches and signed payouts from client threads,
while each writing command runs 10 times on the same data directory: operator create, add-secret
and remove-secret, company create, custody init, chain faucet, export create and backup. Before
every read-then-write went through write_transaction, `operator add-secret` failed so with
"database is locked" (a deferred SQLite transaction cannot become a writer once another process
committed). The commands run in this test's process through click's runner (a process other than
the server, so the locking between them is the real one) without paying an interpreter start per
run; the first run of the two operator commands the issue saw fail is a real `appliance` process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner

from tests.conftest import BACKEND
from tests.crash.harness import start_server

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        BACKEND != "sqlite", reason="the lock at stake is SQLite's, on the data directory's files"
    ),
]

RUNS = 10
# Their first run is a real `python -m appliance` process (the failing commands); an
# interpreter start each costs 3-10 s on a loaded machine, so the other runs stay in process.
REAL_PROCESS = {"operator create", "operator add-secret"}
BLOCK_SECONDS = "0.2"  # the embedded chain's block time: a faucet run waits for one block


class Load:
    """Client threads writing to the server until stopped; what they were answered."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.counts = {"gps": 0, "payouts": 0}
        self.surprises: list[str] = []
        self.threads: list[threading.Thread] = []

    def run(self, name: str, step) -> None:
        def loop() -> None:
            while not self.stop.is_set():
                try:
                    step()
                except Exception as exc:  # an answer other than success, or no answer
                    self.surprises.append(f"{name}: {type(exc).__name__}: {exc}")
                    return
                self.counts[name] += 1

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        self.threads.append(thread)

    def end(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)


def test_each_writing_cli_command_succeeds_ten_times_beside_a_serving_process_under_load(
    settings, tmp_path: Path, monkeypatch
) -> None:
    from appliance.cli import cli
    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.engine.app import create_app as create_engine
    from appliance.engine.client import EngineClient
    from tests.dispatch.factory import make_company, make_member
    from tests.engine.helpers import make_operator

    monkeypatch.setenv("APPLIANCE_LOCAL_BLOCK_SECONDS", BLOCK_SECONDS)
    monkeypatch.setenv("APPLIANCE_BACKUP_PASSPHRASE", "the backup passphrase")  # backups are encrypted
    tracker = make_member(create_dispatch(settings), make_company(), "courier")
    operator = make_operator(create_engine(settings))
    data_dir = str(settings.data_dir)

    server = start_server(settings.data_dir, "--processes", "1")
    load = Load()
    try:
        gps_session = requests.Session()
        gps_numbers = iter(range(10**6))
        base = (datetime.now(UTC) - timedelta(hours=5)).replace(microsecond=0)

        def gps() -> None:
            n = next(gps_numbers)
            points = [
                {"lat": 40.18, "lon": 44.51, "capturedAt": (base + timedelta(seconds=n * 10 + i)).isoformat()}
                for i in range(10)
            ]
            answer = gps_session.post(
                f"{server.dispatch}/courier/location",
                json={"points": points},
                headers=tracker.headers,
                timeout=30,
            )
            assert answer.status_code == 202, answer.text

        def payouts(thread: int):
            engine = EngineClient(server.engine, operator["operatorId"], operator["secret"], max_attempts=1)
            numbers = iter(range(10**6))

            def submit() -> None:
                n = next(numbers)
                answer = engine.submit_payout(
                    f"pyo_load{thread}x{n:05d}", "USDC", str(1000 + n), "0x" + f"{n:040x}"
                )
                assert answer["outcome"] == "ACCEPTED", answer

            return submit

        load.run("gps", gps)
        for thread in range(3):
            load.run("payouts", payouts(thread))

        runner = CliRunner()
        outcomes: dict[str, list[str]] = {}

        def run(name: str, *args: str) -> dict:
            command = [*args, "--data-dir", data_dir, "--json"]
            if name in REAL_PROCESS and not outcomes.get(name):  # the issue's own reproduction
                done = subprocess.run(
                    [sys.executable, "-m", "appliance", *command],
                    capture_output=True,
                    text=True,
                    timeout=120,
                    env={**os.environ, "APPLIANCE_LOCAL_BLOCK_SECONDS": BLOCK_SECONDS},
                )
                code, output, error = done.returncode, done.stdout, done.stderr
            else:
                result = runner.invoke(cli, command, catch_exceptions=True)
                code, output, error = result.exit_code, result.stdout, result.stderr + repr(result.exception)
            failure = "" if code == 0 else f"exit {code}: {output}{error}"
            outcomes.setdefault(name, []).append(failure)
            return json.loads(output.splitlines()[-1]) if not failure else {}

        started = time.monotonic()
        for n in range(RUNS):
            run("operator create", "operator", "create", f"op_cliload{n:04d}")
            added = run("operator add-secret", "operator", "add-secret", operator["operatorId"])
            run(
                "operator remove-secret",
                "operator",
                "remove-secret",
                operator["operatorId"],
                added.get("secretId", "-"),
            )
            run(
                "company create",
                "company",
                "create",
                "--name",
                f"Load {n}",
                "--owner-email",
                f"owner{n}@load.example",
                "--owner-name",
                "Owner",
                "--depot-name",
                "Depot",
                "--depot-address",
                "Yerevan",
                "--depot-lat",
                "40.18",
                "--depot-lon",
                "44.51",
            )
            run("custody init", "custody", "init")
            run(
                "chain faucet",
                "chain",
                "faucet",
                "--chain-id",
                "eth_local",
                "--asset",
                "ETH",
                "--to",
                "0x" + "cd" * 20,
                "--amount",
                "1",
            )
            run(
                "export create",
                "export",
                "create",
                "--operator",
                operator["operatorId"],
                "--report-type",
                "PAYOUTS",
                "--asset",
                "USDC",
                "--from",
                "2026-01-01T00:00:00Z",
                "--to",
                "2027-01-01T00:00:00Z",
            )
            run("backup", "backup", "--out", str(tmp_path / f"backup-{n}"))
        seconds = time.monotonic() - started
    finally:
        load.end()
        server.stop()

    print(
        f"\n{len(outcomes) * RUNS} CLI runs in {seconds:.1f} s beside {load.counts['gps']} GPS batches "
        f"and {load.counts['payouts']} signed payouts"
    )
    failed = {name: [f for f in runs if f] for name, runs in outcomes.items() if any(runs)}
    assert not failed, failed
    assert all(len(runs) == RUNS for runs in outcomes.values()) and len(outcomes) == 8
    assert not load.surprises, load.surprises
    # The load really ran beside the commands.
    assert load.counts["gps"] > 10 and load.counts["payouts"] > 10, load.counts
