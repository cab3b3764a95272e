"""Several serving processes on the same listening sockets, and the parent that supervises them:
it forks them, replaces one that dies (backing off when one keeps failing at its start), takes one
whose listener loops fall silent out of the rotation and kills it when it stays silent, and on
SIGTERM or SIGINT stops them all gracefully."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from appliance.serving.balance import ConnectionBalance
from appliance.serving.process import Worker, _private_data_dir, serve
from appliance.serving.signals import stop_signals_held
from appliance.settings import Settings

log = logging.getLogger("appliance.server")  # one logger for serving, as before the split


Build = Callable[[], tuple[list[tuple[str, Any, int]], list[tuple[str, Worker]]]]

# How long the parent waits for every serving process before it says "listening" all the same.
READY_TIMEOUT_SECONDS = 60


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for ``host``:``port``, bound once and shared by every serving process
    (the kernel hands each new connection to one of the processes waiting in accept)."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(1024)
    return sock


def _socket_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve_processes(
    settings: Settings,
    ports: list[tuple[str, int]],
    build: Build,
    processes: int,
    *,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve with ``processes`` forked serving processes on the same listening sockets.

    Each process builds its own apps (its own database connections, engines and caches) after
    the fork, so that nothing but the listening sockets is shared. Background workers run in the
    first process only (their leases would let several run side by side; one is enough). The
    parent supervises: a serving process that dies unexpectedly is replaced; on SIGTERM or
    SIGINT every process is told to stop, finishes its requests in flight (serve's graceful
    stop) and the parent exits once all have."""
    _private_data_dir(settings)
    sockets = {name: listening_socket(settings.host, port) for name, port in ports}
    balance = ConnectionBalance(processes, list(sockets))
    children: dict[int, int] = {}  # pid -> process number
    started: dict[int, float] = {}  # process number -> when it was last started (monotonic)
    failures: dict[int, int] = {}  # process number -> exits in a row soon after a start
    stopping = threading.Event()

    announced = threading.Lock()

    def announce_once() -> None:
        if announced.acquire(blocking=False):
            for name, sock in sockets.items():
                announce(f"{name} listening on {_socket_url(sock)}")

    def announce_when_serving() -> None:
        # "listening" once every process serves: a client that connects on that line (a proxy's
        # pool, a load test) has its connections spread over all of them, not over the first one
        # up. A process that cannot start does not hold the line back for ever, and a serve
        # stopped before all were up still says it (after the wait below).
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while not balance.all_serving() and time.monotonic() < deadline and not stopping.is_set():
            time.sleep(0.02)
        if stopping.is_set():
            return
        if balance.all_serving():
            log.info("%d serving processes ready", processes)
        else:
            log.warning("not every serving process started within %d s", READY_TIMEOUT_SECONDS)
        announce_once()

    def spawn(number: int) -> None:
        balance.forget_beats(number)
        started[number] = time.monotonic()
        with stop_signals_held():  # the serving process starts with them blocked, threads and all
            pid = os.fork()
        if pid == 0:  # the serving process
            # Not the parent's handlers. A stop signal sent while the process builds its apps
            # waits (blocked) until serve has installed its own and stops it gracefully.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 0
            try:
                apps, workers = build()
                serve(
                    settings,
                    apps,
                    workers=workers if number == 0 else (),
                    announce=lambda _line: None,
                    sockets=sockets,
                    balance=(balance, number),
                )
            except BaseException:
                log.exception("serving process %d failed", number)
                code = 1
            finally:
                logging.shutdown()
                os._exit(code)
        children[pid] = number

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping %d serving processes", signal.Signals(signum).name, len(children))
        stopping.set()
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    for first in range(processes):
        spawn(first)
    with stop_signals_held():  # so that they reach the main thread, waiting in os.wait
        threading.Thread(target=announce_when_serving, name="announce", daemon=True).start()
        threading.Thread(
            target=watch_heartbeats,
            args=(
                balance,
                children,
                stopping,
                settings.heartbeat_seconds,
                settings.replace_after_seconds,
                started,
            ),
            name="heartbeats",
            daemon=True,
        ).start()
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        ended = children.pop(pid) if pid in children else None
        if ended is not None:
            balance.not_serving(ended)  # its count would hold the others back until it is replaced
        if ended is None or stopping.is_set():
            continue
        # A process that fails at its start must not be restarted in a tight loop: one that ended
        # soon after its start waits longer each time (1, 2, 4 … 30 s), one that served a while 1 s.
        lived = time.monotonic() - started.get(ended, 0.0)
        failures[ended] = failures.get(ended, 0) + 1 if lived < QUICK_EXIT_SECONDS else 1
        delay = restart_delay(failures[ended])
        log.error(
            "serving process %d exited (status %d) %.0f s after its start; starting another in %.0f s",
            ended,
            status,
            lived,
            delay,
        )
        if not stopping.wait(delay):  # a stop signal meanwhile ends the wait
            spawn(ended)
    announce_once()  # stopped before every process served: the lines are printed all the same
    for sock in sockets.values():
        sock.close()
    log.info("stopped")


HEARTBEAT_CHECK_SECONDS = 0.5
QUICK_EXIT_SECONDS = 10.0  # a serving process that ends sooner after its start failed to start


def restart_delay(failures: int) -> float:
    """How long the parent waits before it starts a serving process again, after ``failures``
    exits in a row each soon after its start (1 for one that served a while)."""
    return float(min(30, 2 ** (max(failures, 1) - 1)))


# A serving process builds its apps in a few seconds; one that has not served this long after its
# start is stuck there (watch_heartbeats). Generous: a slow disk's first start must not be killed.
START_WITHIN_SECONDS = 120.0


def watch_heartbeats(
    balance: ConnectionBalance,
    children: dict[int, int],
    stopping: threading.Event,
    out_after: float,
    replace_after: float,
    started: dict[int, float] | None = None,
    start_within: float = START_WITHIN_SECONDS,
) -> None:
    """The parent's watch over its serving processes (issue 32). A process whose listener loops
    have not turned for ``out_after`` seconds (stopped by SIGSTOP or a debugger, stuck) is taken
    out of the rotation: its connection counts are set to NOT_SERVING, so that the others take
    every new connection instead of leaving them to it (with its count frozen low, the others
    stopped accepting: nobody answered). It comes back by itself the moment its loops turn
    again. One silent for ``replace_after`` seconds is killed (SIGKILL reaches a stopped
    process; its flocks and SQLite locks go with it) and the supervisor starts another. So is one
    that has not served within ``start_within`` seconds of its start (``started``: process number
    -> monotonic time of its fork), which never beat: stuck in its start (stopped there, a lock
    never granted), it would otherwise be left alone for ever."""
    out: set[int] = set()
    started = started if started is not None else {}
    while not stopping.wait(HEARTBEAT_CHECK_SECONDS):
        now = time.monotonic()
        for pid, number in list(children.items()):
            silent = balance.silent_for(number, now)
            since_start = now - started.get(number, now)
            if silent is None and since_start >= start_within:
                log.error(
                    "serving process %d (pid %d) has not served %.0f s after its start: killing it "
                    "to start another",
                    number,
                    pid,
                    since_start,
                )
                started[number] = now  # judged again from its replacement's start
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                continue
            if silent is None or silent < out_after:
                if number in out and silent is not None:
                    out.discard(number)
                    log.warning("serving process %d (pid %d) answers again: back in rotation", number, pid)
                continue
            if silent >= replace_after:
                log.error(
                    "serving process %d (pid %d) silent for %.0f s: killing it to start another",
                    number,
                    pid,
                    silent,
                )
                balance.forget_beats(number)
                out.discard(number)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                continue
            if number not in out:
                out.add(number)
                log.warning(
                    "serving process %d (pid %d) silent for %.1f s: out of rotation until it answers",
                    number,
                    pid,
                    silent,
                )
            balance.not_serving(number)  # again each check: a late turn of its loop may have reset it
