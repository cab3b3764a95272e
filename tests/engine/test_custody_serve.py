"""A real `appliance serve` with an encrypted custody.key: without the passphrase (and no terminal
to ask on) it stops at once with one line; with it, every serving process opens the key and
derives addresses."""

from __future__ import annotations

import json
import os
import subprocess
import time

import requests

from appliance.engine.custody_file import encrypt_in_place
from appliance.settings import Settings
from tests.conftest import free_port, serve_command
from tests.engine.helpers import Signer, make_operator
from tests.engine.pipeline_harness import TEST_MNEMONIC

PASSPHRASE = "serve passphrase"


def _environment(**extra: str) -> dict[str, str]:
    kept = {
        k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_") or k == "APPLIANCE_TEST_BACKEND"
    }
    return {**kept, **extra}


def _encrypted_key(settings: Settings) -> None:
    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    encrypt_in_place(settings.data_dir, lambda: PASSPHRASE)


def test_serve_without_the_passphrase_and_no_terminal_stops_with_one_line(settings: Settings) -> None:
    _encrypted_key(settings)
    done = subprocess.run(
        serve_command(settings.data_dir, free_port(), free_port(), "--only", "engine"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env=_environment(),
    )
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: custody key: custody.key is encrypted and no passphrase was given")


def test_serve_with_the_passphrase_opens_the_key_in_every_serving_process(
    settings: Settings, engine_app
) -> None:
    _encrypted_key(settings)
    operator = make_operator(engine_app)
    port = free_port()
    process = subprocess.Popen(
        serve_command(settings.data_dir, free_port(), port, "--only", "engine", "--processes", "2"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_environment(APPLIANCE_CUSTODY_PASSPHRASE=PASSPHRASE),
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                ready = requests.get(f"{base}/health/ready", timeout=2)
                if ready.status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, "the engine did not become ready"
            time.sleep(0.2)
        assert ready.json()["checks"]["custody"] == "pass"
        signer = Signer(None, operator["operatorId"], operator["secret"])
        addresses = set()
        for n in range(6):  # a new connection each time: both serving processes answer some
            body = json.dumps({"accountRef": f"c{n}", "chainId": "eth_local"}).encode()
            answer = requests.post(
                f"{base}/v1/deposit-addresses",
                data=body,
                headers=signer.headers("POST", "/v1/deposit-addresses", body),
                timeout=30,
            )
            assert answer.status_code == 201, answer.text
            addresses.add(answer.json()["address"])
        assert len(addresses) == 6
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=60)


def test_health_opens_an_encrypted_key_with_its_passphrase_and_fails_clearly_without(
    settings: Settings,
) -> None:
    from click.testing import CliRunner

    from appliance.cli import cli

    _encrypted_key(settings)
    args = ["health", "--json", "--data-dir", str(settings.data_dir)]
    opened = CliRunner().invoke(cli, args, env={"APPLIANCE_CUSTODY_PASSPHRASE": PASSPHRASE})
    custody = json.loads(opened.stdout)["engine"]["checks"]["custody"]
    assert custody["status"] == "pass" and custody["encrypted"] is True and "warning" not in custody

    closed = CliRunner().invoke(cli, args, env={"APPLIANCE_CUSTODY_PASSPHRASE": None})
    assert closed.exit_code == 1 and closed.stdout == ""
    assert closed.stderr.startswith("error: custody key: custody.key is encrypted and no passphrase")
