"""The signer's keeper: the process `serve` forks to hold what opens the custody key and to run the
signer's supervisor, so that `serve` itself, its serving processes and its workers never hold it
(docs/security.md, Deployments; issue 43).

- The passphrase typed on the terminal is asked by the keeper, and a passphrase file is read by
  the signer each time it starts: neither ever enters `serve`.
- The passphrase or the key given in the environment (APPLIANCE_CUSTODY_PASSPHRASE,
  APPLIANCE_CUSTODY_KEY) is in `serve`'s memory from its first instruction, where deleting it from
  os.environ would leave copies (the process's original environment block, Python's own copies).
  So `serve`, once its keeper is ready, executes itself again without them (exec_without_secrets):
  a new program image, whose serving processes are forked from memory that never held them. The
  keeper, a child of the same process id, carries on; APPLIANCE_SIGNER_KEEPER tells the new image
  which process it is.

The keeper is non-dumpable like the signer; it restarts the signer when it dies (supervisor.py),
stops it when `serve` sends SIGTERM (last, after the serving processes), and ends with `serve`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from appliance.engine.custody import CustodyError
from appliance.engine.signer import process
from appliance.settings import Settings

log = logging.getLogger("appliance.engine.signer")

KEEPER_VARIABLE = "APPLIANCE_SIGNER_KEEPER"
# Environment variables that open the custody key: `serve` never serves with one of them.
SECRET_VARIABLES = ("APPLIANCE_CUSTODY_PASSPHRASE", "APPLIANCE_CUSTODY_KEY")
STOP_SECONDS = 25.0  # the supervisor's own stop takes up to twice 10 s

Prepare = Callable[[Settings], Settings]


class SignerKeeper:
    def __init__(self, path: Path, pid: int, pidfd: int) -> None:
        self.path = path
        self.pid = pid
        self.pidfd = pidfd

    @classmethod
    def start(cls, settings: Settings, prepare: Prepare) -> SignerKeeper:
        """Fork the keeper, which runs ``prepare`` (asks for the passphrase if need be) and starts
        the signer; return once the signer listens, or raise the key's problem (CustodyError)."""
        from appliance.engine.signer.supervisor import await_report

        read, write = os.pipe2(os.O_CLOEXEC)
        parent = os.getpid()
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the keeper process (its effects are tested)
            os.close(read)
            _keeper(settings, prepare, write, parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(write)
        pidfd = os.pidfd_open(pid)
        try:
            failure = await_report(pid, read, pidfd, "the signer's keeper")
        finally:
            os.close(read)
        keeper = cls(process.socket_path(settings.data_dir), pid, pidfd)
        if failure is not None:
            keeper.stop()
            raise failure
        return keeper

    @classmethod
    def adopt(cls, settings: Settings, marker: str) -> SignerKeeper:
        """The keeper started before this program image (exec_without_secrets's marker)."""
        pid, pidfd = (int(part) for part in marker.split(":"))
        os.set_inheritable(pidfd, False)
        return cls(process.socket_path(settings.data_dir), pid, pidfd)

    def stop(self) -> None:
        """Stop the keeper (it stops the signer first); SIGKILL if it does not end."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        ended, _, _ = select.select([self.pidfd], [], [], STOP_SECONDS)
        if not ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            select.select([self.pidfd], [], [], STOP_SECONDS)
        with contextlib.suppress(ChildProcessError):  # serve's os.wait() may have collected it
            os.waitpid(self.pid, 0)
        os.close(self.pidfd)
        self.path.unlink(missing_ok=True)


def _keeper(settings: Settings, prepare: Prepare, report: int, parent: int) -> NoReturn:
    from appliance.engine.signer.supervisor import SignerSupervisor

    code = 0
    try:
        process.make_undumpable()  # it will hold the passphrase
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C at the prompt ends the keeper
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        settings = prepare(settings)  # the terminal's prompt, here and nowhere else
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # from now on serve's, which stops us last
        os.setpgid(0, 0)  # a stop sent to serve's process group leaves the signer to serve
        supervisor = SignerSupervisor(settings)
        supervisor.start()
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(report, f"error:{type(exc).__name__}:{exc}\n".encode())
        logging.shutdown()
        os._exit(1)
    try:
        os.write(report, b"ready\n")
        os.close(report)
        # SIGTERM stays blocked (as forked): taken here, between looks at whether serve still runs.
        while os.getppid() == parent:
            if signal.sigtimedwait({signal.SIGTERM}, 1.0) is not None:
                supervisor.stop()
                break
        # serve killed outright: end at once, the socket left as it is (a serve started meanwhile
        # may listen there already); the signer, whose parent this is, ends itself within a second.
    except BaseException:
        log.exception("the signer's keeper failed")
        code = 1
    finally:
        logging.shutdown()
        os._exit(code)


def secrets_in_environment() -> list[str]:
    return [name for name in SECRET_VARIABLES if name in os.environ]


def exec_without_secrets(keeper: SignerKeeper | None, command: str) -> NoReturn:
    """Execute this program again, as the same command, without the custody secrets in its
    environment (its keeper, if any, named in APPLIANCE_SIGNER_KEEPER). Only the command run as a
    program can: an embedding caller (a test's CliRunner) is refused with CustodyError."""
    if sys.argv[1:2] != [command]:
        if keeper is not None:
            keeper.stop()
        raise CustodyError(
            f"{' and '.join(secrets_in_environment())} in this process's environment: `{command}` "
            "clears it by executing itself again, which it can only do as the appliance command"
        )
    environment = {name: value for name, value in os.environ.items() if name not in SECRET_VARIABLES}
    environment[KEEPER_VARIABLE] = ""  # executed again: "" when no signer was started
    if keeper is not None:
        os.set_inheritable(keeper.pidfd, True)
        environment[KEEPER_VARIABLE] = f"{keeper.pid}:{keeper.pidfd}"
    frozen = getattr(sys, "frozen", False)
    arguments = [sys.executable, *(sys.argv[1:] if frozen else sys.orig_argv[1:])]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, arguments, environment)
    except OSError:
        if keeper is not None:
            keeper.stop()
        raise


def adopted(settings: Settings) -> SignerKeeper | None:
    """The keeper this program image inherited from the one before the exec, if any."""
    marker = os.environ.pop(KEEPER_VARIABLE, "")
    return SignerKeeper.adopt(settings, marker) if marker else None
