"""A newcomer's path: `appliance demo` on a fresh data directory reaches "listening", every health
check passes, and the printed tracking URL and commands answer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from appliance.engine.client import EngineClient
from tests.conftest import free_port

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_starts_whole_and_what_it_prints_works(tmp_path: Path) -> None:
    if subprocess.run(["which", "tilemaker"], capture_output=True).returncode != 0:
        pytest.skip(
            "Debian's tilemaker is needed for the demo's map tiles (.ci/system-packages.sh installs it)"
        )
    dispatch_port, engine_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "appliance",
            "demo",
            "--data-dir",
            str(tmp_path / "data"),
            "--dispatch-port",
            str(dispatch_port),
            "--engine-port",
            str(engine_port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    assert process.stdout is not None
    # Read everything the demo prints for as long as it runs: its access lines go to the same
    # pipe, and a pipe nobody reads fills (64 KiB) and blocks every thread that logs, the stop
    # signal's handler included.
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(iter(process.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 180
        while sum("listening" in line for line in list(printed)) < 2:
            assert time.monotonic() < deadline, "".join(printed)
            assert process.poll() is None or reader.is_alive(), "the demo ended: " + "".join(printed)
            time.sleep(0.1)
        text = "".join(printed)
        dispatch, engine = f"http://127.0.0.1:{dispatch_port}", f"http://127.0.0.1:{engine_port}"
        health = requests.get(f"{dispatch}/healthz", timeout=10)
        assert health.status_code == 200, health.text
        assert all(check["status"] == "pass" for check in health.json()["checks"].values())
        ready = requests.get(f"{engine}/health/ready", timeout=30).json()
        assert ready["status"] == "pass" and set(ready["checks"].values()) == {"pass"}
        tracking = re.search(r"Tracking page of an order on its way: (\S+)", text)
        assert tracking, text
        assert requests.get(tracking.group(1), timeout=10).status_code == 200
        for screen in (r"Dispatcher console: (\S+)", r"Courier app: (\S+)"):
            printed_url = re.search(screen, text)
            assert printed_url and requests.get(printed_url.group(1), timeout=10).status_code == 200, text
        commands = [line.strip() for line in text.split("Try it:")[1].splitlines()[1:4]]
        script = (
            "set -e\n" + "\n".join(commands[:2]) + " -o /dev/null -w '%{http_code}\\n'\n" + commands[2] + "\n"
        )
        result = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[0] == "200"
        assert "pyo_demo00000001" in result.stdout  # the signed listing of the demo operator's payouts
        assert "sample streets" in text and "not Yerevan's" in text
        # The payouts complete and the deposit confirms while the demo runs.
        secret = re.search(r"operator op_demo0000001 secret (\S+)", text)
        assert secret, text
        client = EngineClient(engine, "op_demo0000001", secret.group(1))
        deadline = time.monotonic() + 90
        while True:
            payouts = [client.get_payout(f"pyo_demo0000000{n}")["status"] for n in (1, 2, 3)]
            deposits = client._json(
                client.request("GET", "/v1/deposits", params={"accountRef": "demo-customer"})
            )["transfers"]
            if payouts == ["COMPLETED"] * 3 and [d["status"] for d in deposits] == ["CONFIRMED"]:
                break
            assert time.monotonic() < deadline, (payouts, deposits)
            time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        stopping = time.monotonic()
        try:
            process.wait(timeout=30)
        finally:
            reader.join(timeout=5)
    stopped = time.monotonic() - stopping
    print(f"the demo printed {sum(map(len, printed))} characters and stopped in {stopped:.1f} s")
    assert process.returncode == 0, "".join(printed[-40:])
