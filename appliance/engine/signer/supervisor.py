"""`serve` starts the signer process before anything else (so that no serving process or worker is
forked from a process that ever held the key), waits until it listens, restarts it when it dies,
and stops it last.

A signer that dies is started again after 1 s, then 2, 4, … up to a minute while it keeps failing
(a passphrase file removed, a damaged key): never a tight loop. One that ran for a minute or more
before it died is started again after 1 s. Meanwhile payouts wait (the pipeline says why) and
deposit addresses answer 503."""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
import time

from appliance.engine import custody as custody_module
from appliance.engine.custody import CustodyError, custody_path
from appliance.engine.custody_file import CustodyPassphraseError
from appliance.engine.signer import process
from appliance.serving.signals import stop_signals_held
from appliance.settings import Settings

log = logging.getLogger("appliance.engine.signer")

READY_TIMEOUT_SECONDS = 120.0  # opening an encrypted key costs about a second of scrypt
FIRST_DELAY, MAX_DELAY = 1.0, 60.0
HEALTHY_AFTER_SECONDS = 60.0
STOP_SECONDS = 10.0
ERRORS = {
    "CustodyPassphraseError": CustodyPassphraseError,
    "CustodyRefused": custody_module.CustodyRefused,
}


def has_custody_key(settings: Settings) -> bool:
    """Whether there is a key for a signer to hold (without opening it)."""
    return bool(settings.custody_key.strip()) or custody_path(settings.data_dir).is_file()


class SignerSupervisor:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.path = process.socket_path(settings.data_dir)
        self.pid: int | None = None
        self.starts = 0
        self._stopping = threading.Event()
        self._watch: threading.Thread | None = None

    def start(self) -> None:
        """Start the signer and wait until it listens; the key's problem (as CustodyError) when it
        cannot start: `serve` stops with that one line."""
        pid, report, pidfd = self._spawn()
        failure = self._await_ready(pid, report, pidfd)
        if failure is not None:
            self._reap(pid)
            _close(report, pidfd)
            raise failure
        with stop_signals_held():  # a stop signal reaches serve's main thread, not this one
            self._watch = threading.Thread(
                target=self._supervise, args=(pid, report, pidfd), name="signer", daemon=True
            )
            self._watch.start()

    def _spawn(self) -> tuple[int, int, int | None]:
        """(pid, the read end of its report pipe, a pidfd of it). The pidfd says when it ended
        whoever reaps it, and even when a process forked meanwhile holds the pipe's write end."""
        read, write = os.pipe2(os.O_CLOEXEC)
        parent = os.getpid()
        # Forked with the stop signals blocked: the signer takes SIGTERM once it listens.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        pid = os.fork()
        if pid == 0:
            os.close(read)
            code = 0
            try:
                # SIGTERM (serve stopping it) ends it at once: it holds nothing to finish. SIGINT
                # (Ctrl-C on serve's terminal) is serve's to handle: it stops the signer last.
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                # A group of its own: a stop sent to serve's process group (a terminal, `kill --
                # -PID`) leaves the signer to serve, which stops it after the serving processes
                # finished the requests (and signatures) in flight.
                os.setpgid(0, 0)
                process.run(self.settings, self.path, write, parent)
            except BaseException as exc:
                log.exception("the signer process failed")
                with contextlib.suppress(OSError):  # `serve` says why when it fails at start
                    os.write(write, f"error:{type(exc).__name__}:{exc}\n".encode())
                code = 1
            finally:
                logging.shutdown()
                os._exit(code)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(write)
        self.pid = pid
        self.starts += 1
        try:
            pidfd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:  # ended and collected by serve's os.wait() already
            pidfd = None
        return pid, read, pidfd

    def _await_ready(self, pid: int, report: int, pidfd: int | None) -> CustodyError | None:
        return await_report(pid, report, pidfd, "the signer process")

    def _reap(self, pid: int) -> None:
        # serve's own os.wait() may have collected it already (it waits for any child)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def _supervise(self, pid: int, report: int, pidfd: int | None) -> None:
        delay = FIRST_DELAY
        started = time.monotonic()
        while True:
            if pidfd is not None:
                select.select([pidfd], [], [])  # readable once the signer has ended
            else:
                while os.read(report, 4096):  # else the pipe's end
                    pass
            _close(report, pidfd)
            self._reap(pid)
            if self._stopping.is_set():
                return
            if time.monotonic() - started >= HEALTHY_AFTER_SECONDS:
                delay = FIRST_DELAY
            log.error("the signer process (pid %d) ended; starting another in %.0f s", pid, delay)
            while True:
                if self._stopping.wait(delay):
                    return
                delay = min(delay * 2, MAX_DELAY)
                pid, report, pidfd = self._spawn()
                started = time.monotonic()
                failure = self._await_ready(pid, report, pidfd)
                if failure is None:
                    log.info("signer process started again (pid %d)", pid)
                    break
                self._reap(pid)
                _close(report, pidfd)
                log.error("the signer process could not start (%s); trying again in %.0f s", failure, delay)

    def stop(self) -> None:
        """Stop the signer (after the serving processes): SIGTERM, then SIGKILL if need be."""
        self._stopping.set()
        pid = self.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        if self._watch is not None:
            self._watch.join(STOP_SECONDS)
            if self._watch.is_alive() and pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                self._watch.join(STOP_SECONDS)
        self.path.unlink(missing_ok=True)


def await_report(pid: int, report: int, pidfd: int | None, what: str) -> CustodyError | None:
    """Wait for the ``ready`` line on ``report`` (None), or the CustodyError it reports instead,
    or that ``what`` ended or stayed silent (the process is then killed)."""
    buffer = b""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while b"\n" not in buffer:
        left = deadline - time.monotonic()
        if left <= 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return CustodyError(f"{what} did not start within {READY_TIMEOUT_SECONDS:.0f} s")
        readable, _, _ = select.select([report, *_some(pidfd)], [], [], left)
        if not readable:
            continue
        chunk = os.read(report, 4096) if report in readable else b""
        if not chunk:
            return CustodyError(f"{what} exited while starting (its log says why)")
        buffer += chunk
    line = buffer.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    if line == "ready":
        return None
    _, name, message = [*line.split(":", 2), "", ""][:3]
    return ERRORS.get(name, CustodyError)(message or line)


def _some(fd: int | None) -> list[int]:
    return [] if fd is None else [fd]


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            os.close(fd)
