"""The signer run apart, as its own OS user (issue 43, docs/security.md, Deployments): `appliance
signer` as user SIGNER, its socket 0660 in the group SOCKET_GROUP (the only way in for another
user), non-dumpable (its /proc files are root's; a process of its own user cannot read its
memory); a real `appliance serve` (root here) with signer_socket naming it holds no key and pays a
payout through it. serve refuses the custody secrets when signer_socket names an external signer.

The tests run as root and take unused user and group ids (no account needed). The interpreter
lives under /root (mode 0700 here): the unprivileged processes start with CAP_DAC_READ_SEARCH
alone (setpriv), which lets them read it and nothing more: it opens no socket (connecting needs
write permission on it) and grants no access to another process's memory."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from appliance.cli.admin import migrate_all
from appliance.common.db import bind_database
from appliance.engine.chain.registry import open_local_chain
from appliance.engine.custody import Custody, new_mnemonic
from appliance.engine.custody_record import custody_probe
from appliance.engine.db import database
from appliance.engine.signer import wire
from appliance.engine.signer.client import SignerClient
from appliance.settings import Settings
from tests.conftest import free_port, serve_command
from tests.engine.helpers import Signer, make_operator, payout_request
from tests.engine.test_signer_serve import wait_for

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="starts processes as other users: root"
)

SIGNER, MEMBER, OUTSIDER = 61001, 61002, 61003  # user ids
SOCKET_GROUP = 61010
ETHER = 10**18
WORKTREE = Path(__file__).resolve().parents[2]


def as_user(uid: int, groups: tuple[int, ...] = ()) -> list[str]:
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
    ]


def environment(**values: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("APPLIANCE_")}
    return {**kept, **values}


def in_child_as(uid: int, groups: list[int], path: Path) -> str:
    """Connect to the signer's socket from a process of ``uid`` (forked, no capability) and ask
    `describe`: "answered", "refused" (the signer closed), or the connect error's name."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        outcome = "failed"
        try:
            os.close(read)
            os.setgroups(groups)
            os.setgid(uid)
            os.setuid(uid)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(str(path))
                wire.send(sock, {"op": "describe"})
                answer = wire.receive(sock)
            outcome = "answered" if answer and answer.get("ok") else "refused"
        except OSError as exc:
            outcome = type(exc).__name__
        finally:
            os.write(write, outcome.encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        outcome = pipe.read().decode()
    os.waitpid(pid, 0)
    return outcome


class Apart:
    def __init__(self, root: Path, settings: Settings, words: str, operator: dict[str, str]) -> None:
        self.root = root
        self.settings = settings  # serve's: engine database shared with the signer
        self.words = words
        self.operator = operator
        self.socket = root / "run" / "signer.sock"
        self.signer_dir = root / "signer"
        self.signer: subprocess.Popen[bytes] | None = None

    def common(self) -> dict[str, str]:
        return {
            "APPLIANCE_ENGINE_DATABASE": self.settings.engine_database,
            "APPLIANCE_SIGNER_SOCKET": str(self.socket),
            "APPLIANCE_LOCAL_BLOCK_SECONDS": "0.2",
        }

    def signer_pid(self) -> int:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(self.socket))
            credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        return int.from_bytes(credentials[:4], "little", signed=True)


@pytest.fixture
def apart(settings: Settings) -> Iterator[Apart]:
    # A folder every user may cross (the pytest folder is root's 0700): the run folder in it is
    # the signer's, its group the socket's.
    root = Path(tempfile.mkdtemp(prefix="signer-apart-", dir="/tmp"))
    root.chmod(0o711)
    try:
        shared = root / "engine"  # the engine database, the signer's user's (root reaches it anyway)
        shared.mkdir(mode=0o700)
        served = settings.replace(engine_database=f"sqlite:///{shared / 'engine.db'}")
        migrate_all(served)
        from appliance.engine.app import create_app

        app = create_app(served)
        operator = make_operator(app)
        words = new_mnemonic()
        signer_dir = root / "signer"
        signer_dir.mkdir(mode=0o700)
        (signer_dir / "custody.key").write_text(words + "\n")
        (signer_dir / "custody.key").chmod(0o600)
        run = root / "run"
        run.mkdir()
        run.chmod(0o750)
        for path in (shared, *shared.iterdir(), signer_dir, *signer_dir.iterdir()):
            os.chown(path, SIGNER, SIGNER)
        os.chown(run, SIGNER, SOCKET_GROUP)
        chain = open_local_chain(settings)
        try:
            chain.faucet("ETH", Custody(words).payout_address, 10 * ETHER)
        finally:
            chain.close()
        yield Apart(root, served, words, operator)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def started(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=env,
        cwd=WORKTREE,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        finally:
            print(log.read_text())  # shown when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def test_the_signer_as_its_own_user_is_reached_through_its_socket_group_only_and_signs_serves_payout(
    apart: Apart,
) -> None:
    signer_env = environment(
        **apart.common(),
        APPLIANCE_DATA_DIR=str(apart.signer_dir),
        APPLIANCE_SIGNER_SOCKET_GROUP=str(SOCKET_GROUP),
    )
    command = [*as_user(SIGNER, (SOCKET_GROUP,)), sys.executable, "-m", "appliance", "signer"]
    with started(command, signer_env, apart.root / "signer.log") as signer:
        wait_for(lambda: signer.poll() is not None or apart.socket.exists(), 60, "the signer did not listen")
        assert signer.poll() is None
        mode = os.stat(apart.socket)
        assert stat.S_IMODE(mode.st_mode) == 0o660
        assert (mode.st_uid, mode.st_gid) == (SIGNER, SOCKET_GROUP)

        # The socket's group is the only way in for another user.
        assert in_child_as(MEMBER, [SOCKET_GROUP], apart.socket) == "answered"
        assert in_child_as(OUTSIDER, [], apart.socket) == "PermissionError"

        # Non-dumpable: its /proc files are root's, and a process of its own user (with the same
        # capability, so that only dumpability decides) cannot read its memory.
        pid = apart.signer_pid()
        assert f"Uid:\t{SIGNER}\t" in Path(f"/proc/{pid}/status").read_text()
        assert os.stat(f"/proc/{pid}/mem").st_uid == 0
        reader = subprocess.run(
            [
                *as_user(SIGNER, (SOCKET_GROUP,)),
                sys.executable,
                "-c",
                f"open('/proc/{pid}/mem', 'rb').close()",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert reader.returncode == 1 and "PermissionError" in reader.stderr, reader.stderr

        # A plain key held by another user: the health check passes without the warning.
        bind_database(database, apart.settings.engine_db_url)
        check = custody_probe(SignerClient(apart.socket))()
        assert check.status == "pass" and "warning" not in check.data, check

        port = free_port()
        serve_env = environment(**apart.common())
        serve = serve_command(
            apart.settings.data_dir, free_port(), port, "--only", "engine", "--processes", "1"
        )
        with started(serve, serve_env, apart.root / "serve.log") as served:
            base = f"http://127.0.0.1:{port}"

            def ready() -> bool:
                if served.poll() is not None:
                    return True
                with contextlib.suppress(requests.RequestException):
                    return requests.get(f"{base}/health/ready", timeout=2).status_code == 200
                return False

            wait_for(ready, 90, "the engine did not become ready")
            assert served.poll() is None
            assert not (apart.settings.data_dir / "custody.key").exists()  # serve holds no key
            api = Signer(None, apart.operator["operatorId"], apart.operator["secret"])
            body = json.dumps(payout_request("pyo_apart00001", asset="ETH", amount="1000000")).encode()
            headers = api.headers("POST", "/v1/payouts", body, "key-apart")
            answer = requests.post(f"{base}/v1/payouts", data=body, headers=headers, timeout=30)
            assert answer.status_code == 201, answer.text

            def status() -> str:
                headers = api.headers("GET", "/v1/payouts/pyo_apart00001")
                got = requests.get(f"{base}/v1/payouts/pyo_apart00001", headers=headers, timeout=30)
                return str(got.json()["status"])

            wait_for(lambda: status() == "COMPLETED", 90, "the payout was not signed and sent")


def test_serve_refuses_custody_secrets_when_signer_socket_names_an_external_signer(
    settings: Settings, tmp_path: Path
) -> None:
    def serve(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            serve_command(settings.data_dir, free_port(), free_port(), "--only", "engine"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            env=environment(APPLIANCE_SIGNER_SOCKET=str(tmp_path / "signer.sock"), **extra),
        )

    opening = f"error: signer_socket names an external signer ({tmp_path / 'signer.sock'}): serve starts no "
    given = serve(APPLIANCE_CUSTODY_PASSPHRASE="given")
    assert given.returncode == 1, given.stderr
    assert given.stderr.strip().splitlines()[-1] == (
        opening
        + "signer of its own, so APPLIANCE_CUSTODY_PASSPHRASE must be given to `appliance signer` only"
    )
    (settings.data_dir / "custody.key").write_text(new_mnemonic() + "\n")
    beside = serve()
    assert beside.returncode == 1, beside.stderr
    assert beside.stderr.strip().splitlines()[-1] == (
        opening + f"signer of its own, so {settings.data_dir / 'custody.key'} must be given to "
        "`appliance signer` only"
    )
