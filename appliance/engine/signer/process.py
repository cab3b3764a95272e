"""The signer process: the only one that opens the custody key. It listens on a Unix socket in the
data directory (signer.sock, mode 0600, its owner's only: a peer of another user is refused as
well), holds no network socket (those a restart inherits from `serve` are closed first), and
answers wire.py's requests, signing only what policy.py allows against the engine database.

It makes itself non-dumpable first (prctl PR_SET_DUMPABLE 0): a process of the same user can then
neither ptrace it nor read its memory through /proc/PID/mem, and its /proc files are root's.

Started by `serve` (supervisor.py), it reports on ``report`` (a pipe to `serve`): ``ready`` once it
listens, or ``error:CLASS:message`` when the key cannot be opened; it keeps the pipe open for life,
so that `serve` sees it end. Run on its own (`appliance signer`, as another OS user: docs/security.md,
Deployments), it has no pipe and no parent to follow; with a socket group its socket is 0660 in
that group, and a peer of any user the kernel let connect (the group's members) is answered."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import socketserver
import stat
import struct
import sys
import threading
from pathlib import Path

from appliance.common.db import bind_database
from appliance.engine.chain.registry import declared_assets
from appliance.engine.custody import CustodyError
from appliance.engine.custody_file import load_for
from appliance.engine.custody_record import guard
from appliance.engine.db import database
from appliance.engine.signer import wire
from appliance.engine.signer.answers import answer
from appliance.engine.signer.core import Signer
from appliance.settings import Settings

log = logging.getLogger("appliance.engine.signer")

SOCKET_NAME = "signer.sock"
PEER_CREDENTIALS = struct.Struct("3i")  # pid, uid, gid
PR_SET_DUMPABLE = 4  # linux/prctl.h


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    signer: Signer
    group_members_too = False  # the socket is 0660 in a group: the kernel admitted whoever connected


class _Connection(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        _pid, uid, _gid = PEER_CREDENTIALS.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS.size)
        )
        if uid != os.getuid() and not self.server.group_members_too:
            log.warning("signer: a process of uid %d connected; refused", uid)
            return
        with contextlib.suppress(OSError, wire.WireError):
            while (request := wire.receive(sock)) is not None:
                wire.send(sock, answer(self.server.signer, request))


def _close_network_sockets(keep: set[int]) -> None:
    """Close the TCP/UDP sockets a fork inherited (serve's listeners): the signer holds none."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in keep:
            continue
        with contextlib.suppress(OSError):
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            sock = socket.socket(fileno=fd)
            family = sock.family
            sock.detach()
            if family in (socket.AF_INET, socket.AF_INET6):
                os.close(fd)


def make_undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): no process of this user may ptrace this one or read its memory
    (/proc/PID/mem, /proc/PID/environ), and it leaves no core dump; children inherit it until they
    exec. Linux only: elsewhere the log says the signer goes without."""
    if not sys.platform.startswith("linux"):
        log.info("signer: prctl(PR_SET_DUMPABLE) is Linux's: this signer stays dumpable by its user")
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"prctl(PR_SET_DUMPABLE, 0): {os.strerror(errno)}")


def _listen(path: Path, group: int | None = None) -> _Server:
    path.unlink(missing_ok=True)  # a socket left by a signer that was killed
    previous = os.umask(0o177)  # created 0600: no moment when another user could connect
    try:
        with wire.reachable(path) as address:
            server = _Server(address, _Connection, bind_and_activate=True)
    finally:
        os.umask(previous)
    if group is None:
        os.chmod(path, 0o600)
    else:  # the group first, then its permission: never open to the group the file had before
        os.chown(path, -1, group)
        os.chmod(path, 0o660)
        server.group_members_too = True
    return server


def _exit_with_parent(parent: int) -> None:
    """A `serve` killed outright (SIGKILL) cannot stop its signer: the signer stops itself."""
    while True:
        threading.Event().wait(1.0)
        if os.getppid() != parent:
            os._exit(0)


def run(
    settings: Settings, path: Path, report: int | None, parent: int | None, group: int | None = None
) -> None:
    """The signer process's life (it never returns normally: SIGTERM ends it). ``report`` and
    ``parent`` None: run on its own (`appliance signer`), the key's problem raised, not reported."""
    if report is not None:
        _close_network_sockets(keep={report})
    make_undumpable()  # before the key or its passphrase is read
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), name="signer-parent", daemon=True).start()
    try:
        # Its facts through a database role of its own where one is set (a role that may only read).
        facts_url = settings.signer_engine_database or settings.engine_db_url
        bind_database(database, facts_url, busy_timeout_ms=settings.sqlite_busy_timeout_ms)
        custody = load_for(settings)
        if custody is None:
            raise CustodyError(f"there is no custody key in {settings.data_dir}")
        custody.guard_with(guard)
        # The fingerprint recorded (or compared) now, before any caller asks for a signature from
        # inside its write transaction: recording it then would wait for that caller's lock.
        custody.verify()
        signer = Signer(custody, declared_assets(settings), settings.signer_gas_cap_wei, settings.data_dir)
        server = _listen(path, group)
        server.signer = signer
    except CustodyError as exc:
        if report is None:
            raise
        os.write(report, f"error:{type(exc).__name__}:{exc}\n".encode())
        return
    log.info("signer listening on %s (key fingerprint %s, %s)", path, custody.fingerprint, custody.source)
    if report is not None:
        os.write(report, b"ready\n")
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    server.serve_forever(poll_interval=1.0)
