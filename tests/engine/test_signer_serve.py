"""A real `appliance serve` (two serving processes) with an encrypted custody.key: its signer
process alone holds the key, on an owner-only Unix socket and without a network socket; a payout
goes out through it on the embedded chain; it refuses what no stored payout asks for; killed with
SIGKILL, it is started again and signing resumes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests

from appliance.engine.chain.registry import open_local_chain
from appliance.engine.custody import Custody, new_mnemonic
from appliance.engine.custody_file import encrypt_in_place
from appliance.engine.outgoing.transactions import erc20_transfer_data
from appliance.engine.signer import wire
from appliance.engine.signer.client import SignerClient
from appliance.engine.signer.core import SignerRefused
from appliance.engine.signer.process import socket_path
from appliance.settings import Settings
from tests.conftest import free_port, serve_command
from tests.engine.helpers import DESTINATION, Signer, make_operator, payout_request

PASSPHRASE = "signer passphrase"
ETHER = 10**18
PEER_CREDENTIALS = "3i"


class Served:
    def __init__(
        self, process: subprocess.Popen[bytes], base: str, settings: Settings, words: str, api: Signer
    ):
        self.process = process
        self.base = base
        self.settings = settings
        self.words = words
        self.api = api

    @property
    def socket(self) -> Path:
        return socket_path(self.settings.data_dir)

    def signer_pid(self) -> int:
        """The pid of the process listening on signer.sock (the kernel's word, SO_PEERCRED)."""
        with (
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock,
            wire.reachable(self.socket) as address,
        ):
            sock.connect(address)
            credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(credentials[:4], "little", signed=True)

    def keeper_pid(self) -> int:
        """The signer's parent: the keeper serve forked to hold the passphrase and restart it."""
        return parent_of(self.signer_pid())

    def others(self) -> list[int]:
        """serve's own process and every serving process it forked, the keeper left out (the signer
        is the keeper's child)."""
        keeper = self.keeper_pid()
        return [self.process.pid, *(pid for pid in children(self.process.pid) if pid != keeper)]

    def call(self, method: str, path: str, payload: Any = None, key: str | None = None) -> requests.Response:
        body = b"" if payload is None else json.dumps(payload).encode()
        headers = self.api.headers(method, path, body, key)
        return requests.request(method, self.base + path, data=body or None, headers=headers, timeout=30)

    def pay(self, payout_id: str, asset: str = "ETH", amount: str = "1000000") -> None:
        body = payout_request(payout_id, asset=asset, amount=amount)
        answer = self.call("POST", "/v1/payouts", body, key=f"key-{payout_id}")
        assert answer.status_code == 201, answer.text

    def payout(self, payout_id: str) -> dict[str, Any]:
        answer = self.call("GET", f"/v1/payouts/{payout_id}")
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def children(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat_line = Path(f"/proc/{entry}/stat").read_text()
                if int(stat_line.rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry))
    return found


def memory_holds(pid: int, needle: bytes) -> bool:
    """Whether the readable writable memory of ``pid`` (heap, anonymous mappings, stacks) holds
    ``needle``: where a Python string read from a file ends up."""
    chunk = 16 * 1024 * 1024
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("rw"):
                continue
            start, end = (int(bound, 16) for bound in fields[0].split("-"))
            position = start
            while position < end:
                size = min(chunk + len(needle), end - position)
                try:
                    mem.seek(position)
                    data = mem.read(size)
                except (OSError, ValueError, OverflowError):
                    break
                if needle in data:
                    return True
                position += chunk
    return False


def inet_sockets() -> dict[str, tuple[str, int, str]]:
    """Every TCP and UDP socket of the host by inode: (table, remote port, state)."""
    found = {}
    for table in ("tcp", "tcp6", "udp", "udp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                fields = row.split()
                found[fields[9]] = (table, int(fields[2].rsplit(":", 1)[1], 16), fields[3])
    return found


def network_sockets_but_the_database(pid: int, settings: Settings) -> list[tuple[str, int, str]]:
    """The network sockets ``pid`` holds, less its connection to a PostgreSQL engine database
    (the signer reads the payouts it checks from the database, as every process of the engine)."""
    database = urlsplit(settings.engine_database) if settings.engine_database.startswith("postgres") else None
    database_port = (database.port or 5432) if database is not None else None
    sockets = inet_sockets()
    held = [sockets[inode] for inode in socket_inodes(pid) if inode in sockets]
    return [
        (table, port, state)
        for table, port, state in held
        if not (table.startswith("tcp") and port == database_port and state != TCP_LISTEN)
    ]


TCP_LISTEN = "0A"


def socket_inodes(pid: int) -> set[str]:
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                found.add(target[len("socket:[") : -1])
    return found


def wait_for(done: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


@pytest.fixture
def served(settings: Settings, engine_app) -> Iterator[Served]:
    words = new_mnemonic()
    (settings.data_dir / "custody.key").write_text(words + "\n")
    encrypt_in_place(settings.data_dir, lambda: PASSPHRASE)
    chain = open_local_chain(settings)
    try:
        chain.faucet("ETH", Custody(words).payout_address, 10 * ETHER)
    finally:
        chain.close()
    operator = make_operator(engine_app)
    port = free_port()
    environment = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith("APPLIANCE_") or k == "APPLIANCE_TEST_BACKEND"
        },
        "APPLIANCE_CUSTODY_PASSPHRASE": PASSPHRASE,
        "APPLIANCE_LOCAL_BLOCK_SECONDS": "0.2",
    }
    log = settings.data_dir.parent / "serve.log"
    base = f"http://127.0.0.1:{port}"

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            serve_command(settings.data_dir, free_port(), port, "--only", "engine", "--processes", "2"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log.open("wb"),
            env=environment,
            start_new_session=True,
        )

    def ready() -> bool:
        if process.poll() is not None:
            return True
        try:
            return requests.get(f"{base}/health/ready", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    process = start()
    wait_for(ready, 90, "the engine did not become ready")
    assert process.poll() is None, log.read_text()
    try:
        yield Served(process, base, settings, words, Signer(None, operator["operatorId"], operator["secret"]))
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=120)
        finally:
            print(log.read_text())  # shown when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def test_the_signer_alone_holds_the_key_on_an_owner_only_socket_and_a_payout_goes_out_through_it(
    served: Served,
) -> None:
    mode = os.stat(served.socket).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    signer = served.signer_pid()
    assert served.keeper_pid() in children(served.process.pid)
    assert network_sockets_but_the_database(signer, served.settings) == [], (
        "the signer holds a network socket"
    )

    served.pay("pyo_signer0001")
    wait_for(
        lambda: served.payout("pyo_signer0001")["status"] == "COMPLETED", 90, "the payout did not complete"
    )
    assert not memory_holds(served.keeper_pid(), " ".join(served.words.split()[:8]).encode())

    # Eight words of the 24 in a row: where the decrypted key would sit in a process that read it.
    words = " ".join(served.words.split()[:8]).encode()
    assert memory_holds(signer, words)  # the search finds the key where it is
    others = served.others()
    assert len(others) == 3  # serve and its two serving processes (the first runs the workers)
    for pid in others:
        assert not memory_holds(pid, words), f"process {pid} holds the custody key's words"


def test_the_passphrase_given_in_the_environment_is_in_no_serving_process_environment_or_memory(
    served: Served,
) -> None:
    """Issue 43, finding 1: serve handed APPLIANCE_CUSTODY_PASSPHRASE to every serving process (in
    its environment and its settings); whoever ran code in one decrypted custody.key with it."""
    passphrase = PASSPHRASE.encode()
    keeper = served.keeper_pid()
    # The search finds it where it is: the keeper was forked from the serve that read it.
    assert memory_holds(keeper, passphrase)
    served.pay("pyo_secret0001")  # the serving processes and workers at work meanwhile
    wait_for(
        lambda: served.payout("pyo_secret0001")["status"] == "COMPLETED", 90, "the payout did not complete"
    )
    others = served.others()
    assert len(others) == 3  # serve and its two serving processes
    for pid in others:
        environment = Path(f"/proc/{pid}/environ").read_bytes()
        assert passphrase not in environment, f"process {pid} has the passphrase in its environment"
        assert b"APPLIANCE_CUSTODY_PASSPHRASE" not in environment
        assert not memory_holds(pid, passphrase), f"process {pid} holds the custody passphrase"


def test_the_signer_refuses_a_payout_transaction_unlike_the_stored_payout_or_of_a_paused_operator(
    served: Served,
) -> None:
    from appliance.common.db import bind_database, connection
    from appliance.engine.db import database
    from appliance.engine.ledger import service
    from appliance.engine.models import Payout

    served.pay("pyo_unfunded01", asset="USDC", amount="5000")  # no USDC: it waits in REQUESTED
    bind_database(database, served.settings.engine_db_url)
    with connection(database):
        payout = Payout.get(Payout.payout_id == "pyo_unfunded01")
    client = SignerClient(served.socket)
    usdc = open_local_chain_contract(served.settings)

    def sign(recipient: str, amount: int) -> tuple[bytes, str]:
        tx = {
            "type": 2,
            "chainId": 1337,
            "nonce": 99,
            "to": usdc,
            "value": 0,
            "data": erc20_transfer_data(recipient, amount),
            "gas": 100_000,
            "maxFeePerGas": 10**9,
            "maxPriorityFeePerGas": 10**9,
        }
        return client.sign_transaction(0, 0, tx, payout_id=payout.id)

    assert payout.status == "REQUESTED"
    raw, _tx_hash = sign(DESTINATION, 5000)  # what the stored payout asks for
    assert raw
    with pytest.raises(SignerRefused, match="pays 0x"):
        sign("0x" + "cd" * 20, 5000)
    with pytest.raises(SignerRefused, match="pays 5000 minor units, not 5001"):
        sign(DESTINATION, 5001)
    with connection(database):
        service.set_paused(payout.operator_id, True, "test")
    with pytest.raises(SignerRefused, match="is paused"):
        sign(DESTINATION, 5000)


def open_local_chain_contract(settings: Settings) -> str:
    from appliance.engine.chain.local import usdc_contract

    return usdc_contract()


def test_the_signer_killed_with_sigkill_is_started_again_and_signing_resumes(served: Served) -> None:
    first = served.signer_pid()
    os.kill(first, signal.SIGKILL)

    def another() -> bool:
        with contextlib.suppress(OSError):
            return served.signer_pid() != first
        return False

    wait_for(another, 60, "no signer was started again")
    mode = os.stat(served.socket).st_mode
    assert stat.S_IMODE(mode) == 0o600
    served.pay("pyo_afterkill1")
    wait_for(
        lambda: served.payout("pyo_afterkill1")["status"] == "COMPLETED", 90, "the payout did not complete"
    )


def appliance_json(served: Served, *args: str) -> Any:
    """A command run as an administrator runs it beside serve, its JSON answer."""
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_") or k == "APPLIANCE_TEST_BACKEND"
    }
    done = subprocess.run(
        [sys.executable, "-m", "appliance", *args, "--data-dir", str(served.settings.data_dir), "--json"],
        capture_output=True,
        env=environment,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_a_deposit_is_swept_into_the_payout_wallet_through_the_signer_process(served: Served) -> None:
    made = served.call("POST", "/v1/deposit-addresses", {"accountRef": "customer-1", "chainId": "eth_local"})
    assert made.status_code == 201, made.text
    address = made.json()["address"]
    appliance_json(
        served,
        "chain",
        "faucet",
        "--chain-id",
        "eth_local",
        "--asset",
        "ETH",
        "--to",
        address,
        "--amount",
        str(ETHER // 10),
    )

    def swept() -> bool:
        rows = appliance_json(served, "sweeps")["sweeps"]
        return any(row["address"] == address and row["status"] == "completed" for row in rows)

    # Confirmed, then swept by serve's job, signed by the signer process (the only one that can).
    wait_for(swept, 90, "the deposit was not swept")
    sweep = next(row for row in appliance_json(served, "sweeps")["sweeps"] if row["address"] == address)
    # All of it but the fee (EIP-1559: the fee reserved at the fee cap; what the base fee left
    # unspent stays at the address, below any sweep's worth).
    assert (
        int(sweep["amountMinor"]) + int(sweep["feeMinor"]) <= ETHER // 10 < int(sweep["amountMinor"]) * 1.01
    )
    assert "refused" not in (served.settings.data_dir.parent / "serve.log").read_text()


def test_the_passphrase_typed_on_serves_terminal_reaches_only_its_keeper_and_signer(
    settings: Settings, engine_app
) -> None:
    """The terminal's prompt is answered in the keeper: serve and its serving processes, forked
    from serve, never read it (before, serve asked and kept it in its settings)."""
    import pty
    import threading

    passphrase = "typed " + os.urandom(12).hex()
    (settings.data_dir / "custody.key").write_text(new_mnemonic() + "\n")
    encrypt_in_place(settings.data_dir, lambda: passphrase)
    port = free_port()
    command = serve_command(settings.data_dir, free_port(), port, "--only", "engine", "--processes", "2")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    pid, terminal = pty.fork()
    if pid == 0:  # pragma: no cover - serve, on the terminal's slave side
        os.execve(command[0], command, environment)
    output = bytearray()
    prompted = threading.Event()

    def drain() -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(terminal, 4096):
                output.extend(chunk)
                if b"Custody passphrase" in output:
                    prompted.set()

    threading.Thread(target=drain, daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    try:
        assert prompted.wait(90), bytes(output).decode(errors="replace")
        os.write(terminal, passphrase.encode() + b"\n")

        def ready() -> bool:
            with contextlib.suppress(requests.RequestException):
                return requests.get(f"{base}/health/ready", timeout=2).status_code == 200
            return False

        wait_for(ready, 90, "the engine did not become ready")  # ready: the signer answers
        keeper = next(child for child in children(pid) if any(parent_of(g) == child for g in children(child)))
        assert memory_holds(keeper, passphrase.encode())  # the search finds it where it is
        serving = [pid, *(child for child in children(pid) if child != keeper)]
        assert len(serving) == 3
        for process in serving:
            assert not memory_holds(process, passphrase.encode()), f"process {process} holds it"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        os.close(terminal)


def test_serve_killed_outright_leaves_no_keeper_nor_signer_behind(settings: Settings) -> None:
    (settings.data_dir / "custody.key").write_text(new_mnemonic() + "\n")
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    process = subprocess.Popen(
        serve_command(settings.data_dir, free_port(), port, "--only", "engine", "--processes", "1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
        start_new_session=True,
    )
    try:

        def ready() -> bool:
            with contextlib.suppress(requests.RequestException):
                return requests.get(f"http://127.0.0.1:{port}/health/ready", timeout=2).status_code == 200
            return False

        wait_for(ready, 90, "the engine did not become ready")
        (keeper,) = children(process.pid)
        (signer,) = children(keeper)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        wait_for(
            lambda: not Path(f"/proc/{keeper}").exists() and not Path(f"/proc/{signer}").exists(),
            30,
            "the keeper or the signer outlived serve",
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
