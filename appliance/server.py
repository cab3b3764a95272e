"""Serve both WSGI apps with waitress, each on its own port, until SIGINT or SIGTERM.

On a stop signal the listeners close first (no new connections), requests in flight finish and
their responses are flushed (up to ``shutdown_grace_seconds``), long-lived event streams and
background workers are told to end, and the process exits 0.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import mmap
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from waitress import wasyncore
from waitress.server import create_server
from waitress.task import ThreadedTaskDispatcher

from appliance.common import filemodes, lifecycle
from appliance.common.server_channel import CLEANUP_SECONDS, serve_with_channel
from appliance.common.webapp import MAX_BODY_BYTES
from appliance.settings import Settings

log = logging.getLogger("appliance.server")

Worker = Callable[[threading.Event], None]

# Bytes of one connection's unsent answer held in memory before waitress spills it to a file.
OUTBUF_IN_MEMORY = 8 * 1024 * 1024

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Block SIGTERM and SIGINT in the calling thread meanwhile, so that every thread started
    (and process forked) meanwhile inherits the block.

    The kernel hands a signal sent to the process to any thread that does not block it. Python
    runs its handlers in the main thread only, so one taken by a waitress thread merely marks the
    handler due while the main thread sleeps on in its wait: under load about one stop in twenty
    was never seen by a serving process. With every other thread blocking them, the stop signals
    can only reach the main thread, which is waiting for exactly them."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class ConnectionBalance:
    """The open connections of each serving process on each listener, in memory the processes
    share (an anonymous mapping made before the fork), so that a new connection goes to a process
    that holds no more than any other.

    Without it the kernel hands a connection to whichever process calls accept first, and a burst
    of connections (a client opening its pool, a proxy's keep-alive connections) can land mostly
    on one process: that process's threads then take turns on one interpreter lock (dozens of
    hand-offs per request) while another process idles. A process whose count is above the
    lowest leaves its listening socket out of its poll until it is not."""

    NOT_SERVING = 2**31 - 1  # starting, stopping or gone: never the lowest

    def __init__(self, processes: int, names: list[str]) -> None:
        self.names = names
        self._memory = mmap.mmap(-1, 4 * processes * len(names))
        self._counts = memoryview(self._memory).cast("i")
        for slot in range(processes * len(names)):
            self._counts[slot] = self.NOT_SERVING
        # A wake-up pipe per process and listener, made before the fork. A process decides whether
        # to poll the listener only when its own loop turns; one that left it out while it was above
        # another sleeps on when the other passes it. Without a wake-up every process could leave
        # the listener out at once, and new connections waited in the backlog until some loop
        # turned for another reason (with 300 slow clients trickling a byte each every 3 s: an
        # accept about every 0.4 s, fresh requests timing out after 5 s).
        self._pipes = [os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC) for _ in range(processes * len(names))]
        # Heartbeats: each listener's poll loop writes the time (CLOCK_MONOTONIC, the same clock in
        # every process of the host) on every turn, at least once a second when idle. The parent
        # reads them (``silent_for``) to find a serving process that stopped answering.
        self._beat_memory = mmap.mmap(-1, 8 * processes * len(names))
        self._beats = memoryview(self._beat_memory).cast("d")

    def _slot(self, process: int, name: str) -> int:
        return process * len(self.names) + self.names.index(name)

    def seat(self, process: int, name: str) -> Callable[[int], bool]:
        """``process``'s place on listener ``name``: a function that publishes its open
        connections and tells whether it holds no more than any other process. The poll loop asks
        it about ten times per request, so the slots are worked out here, once."""
        counts, beats, own = self._counts, self._beats, self._slot(process, name)
        others = self._others(own, name)
        accepting = True
        monotonic = time.monotonic

        def may_accept(open_connections: int) -> bool:
            nonlocal accepting
            beats[own] = monotonic()
            counts[own] = open_connections
            for slot in others:
                if counts[slot] < open_connections:
                    if accepting:  # leaving the listener out: those below take over, awake
                        accepting = False
                        self._wake(other for other in others if counts[other] < open_connections)
                    return False
            accepting = True
            return True

        return may_accept

    def wake_fd(self, process: int, name: str) -> int:
        """The end of ``process``'s wake-up pipe on listener ``name`` that its poll loop reads."""
        return self._pipes[self._slot(process, name)][0]

    def _others(self, own: int, name: str) -> list[int]:
        column = range(self.names.index(name), len(self._counts), len(self.names))
        return [slot for slot in column if slot != own]

    def _wake(self, slots: Iterable[int]) -> None:
        for slot in slots:
            with contextlib.suppress(OSError):  # a full pipe: a wake-up is pending already
                os.write(self._pipes[slot][1], b"\0")

    def may_accept(self, process: int, name: str, open_connections: int) -> bool:
        """Publish ``process``'s open connections on listener ``name``; whether it is (one of)
        the processes holding the fewest."""
        return self.seat(process, name)(open_connections)

    def beat(self, process: int, name: str) -> None:
        """``process``'s loop on listener ``name`` turned (also when it takes no connections)."""
        self._beats[self._slot(process, name)] = time.monotonic()

    def forget_beats(self, process: int) -> None:
        """Before (re)starting ``process``: no heartbeat yet, so it is not judged while it starts."""
        for name in self.names:
            self._beats[self._slot(process, name)] = 0.0

    def silent_for(self, process: int, now: float) -> float | None:
        """How long the quietest of ``process``'s listener loops has not turned; None before
        every loop has turned once (a process still starting)."""
        beats = [self._beats[self._slot(process, name)] for name in self.names]
        if not all(beats):
            return None
        return max(0.0, now - min(beats))

    def all_serving(self) -> bool:
        """Whether every process has started serving on every listener."""
        return all(count != self.NOT_SERVING for count in self._counts)

    def not_serving(self, process: int, name: str | None = None) -> None:
        """``process`` takes no connections on ``name`` (every listener when None); the others
        are woken to take over."""
        for each in self.names if name is None else [name]:
            own = self._slot(process, each)
            self._counts[own] = self.NOT_SERVING
            self._wake(self._others(own, each))


class _WakeUp(wasyncore.file_dispatcher):
    """The read end of a wake-up pipe in a listener's poll loop: a byte turns the loop, so that
    the listener's readable() is asked again (ConnectionBalance)."""

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def handle_read(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self.recv(4096):
                pass


class _MostRecentlyIdleFirst(threading.Condition):
    """waitress's task queue condition, waking the thread that went idle last instead of the one
    idle longest. With the default hundred threads and a few busy connections, first-in-first-out
    hands every request to another cold thread (its stack, its database connection's page cache);
    measured on GET /me with two processes: 28-31 context switches per request instead of 13-20,
    a quarter fewer requests per second."""

    def notify(self, n: int = 1) -> None:
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot notify on un-acquired lock")
        waiters = self._waiters  # type: ignore[attr-defined]
        while waiters and n > 0:
            waiter = waiters.pop()
            try:
                waiter.release()
            except RuntimeError:  # released by an interrupted notify already (gh-92530)
                continue
            n -= 1


def _task_dispatcher(threads: int) -> ThreadedTaskDispatcher:
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.queue_cv = _MostRecentlyIdleFirst(dispatcher.lock)
    dispatcher.set_thread_count(threads)
    return dispatcher


class Listener:
    def __init__(
        self,
        name: str,
        app: Any,
        host: str,
        port: int,
        threads: int,
        *,
        trusted_proxy: str = "",
        proxy_count: int = 1,
        sock: socket.socket | None = None,
        balance: tuple[ConnectionBalance, int] | None = None,
        max_body: int = MAX_BODY_BYTES,
        connections_per_client: int = 0,
        request_read_seconds: float = 30.0,
    ) -> None:
        self.name = name
        self.balance = balance
        proxy: dict[str, Any] = {}
        if trusted_proxy:
            # The client's address (rate limits per real client) and scheme come from the proxy.
            proxy = {
                "trusted_proxy": trusted_proxy,
                "trusted_proxy_count": proxy_count,
                "trusted_proxy_headers": {"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"},
            }
        # A socket bound by the parent of several serving processes, or host and port to bind here.
        where: dict[str, Any] = {"sockets": [sock]} if sock is not None else {"host": host, "port": port}
        # waitress's own refusals (oversized headers 431, a malformed request 400) as Problems
        # too, and small answers of known length sent whole (common/server_channel.py).
        self.server: Any = serve_with_channel(
            create_server(
                app,
                # waitress's own dispatcher but for the order idle threads are woken in
                _dispatcher=_task_dispatcher(threads),
                **where,
                threads=threads,
                ident="appliance",
                channel_timeout=120,
                cleanup_interval=CLEANUP_SECONDS,
                # poll(), not select(): select() cannot watch a descriptor numbered 1024 or above,
                # and a process holding about a thousand connections stopped accepting altogether
                asyncore_use_poll=True,
                connection_limit=1000,
                # A busy day's orders listing is over 1 MB of JSON; waitress's default (1 MB) would
                # write every such answer to a temporary file before sending it.
                outbuf_overflow=OUTBUF_IN_MEMORY,
                # The largest body any route of this app reads, chunked bodies included: 413 as the
                # body arrives, instead of an app that never reads it (an unknown route's 404).
                max_request_body_size=max_body,
                # With a trusted proxy, headers it did not vouch for are removed. Without one they
                # reach the app unbelieved (nothing takes an address or scheme from them), so that
                # a request relayed by a proxy on this host is never taken for a loopback client
                # (appliance/common/metrics.py local_request; issue 33).
                clear_untrusted_proxy_headers=bool(trusted_proxy),
                **proxy,
            ),
            # behind a proxy every connection comes from its address: the proxy bounds its clients
            connections_per_client=0 if trusted_proxy else connections_per_client,
            request_read_seconds=request_read_seconds,
        )
        if balance is not None:
            self._balance_accepting(*balance)
        self.thread = threading.Thread(target=self.server.run, name=f"{name}-http", daemon=True)

    def _balance_accepting(self, balance: ConnectionBalance, process: int) -> None:
        server = self.server
        waitress_readable = server.readable  # the connection limit and the channels' clean-up
        may_accept = balance.seat(process, self.name)
        _WakeUp(balance.wake_fd(process, self.name), server._map)

        def readable() -> bool:  # asked by the poll loop on every turn
            if not waitress_readable():
                balance.not_serving(process, self.name)
                balance.beat(process, self.name)
                return False
            return may_accept(len(server.active_channels))

        server.readable = readable

    @property
    def url(self) -> str:
        host = self.server.effective_host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.server.effective_port}"

    def start(self) -> None:
        self.thread.start()

    def stop_accepting(self) -> None:
        server = self.server
        if self.balance is not None:
            balance, process = self.balance
            balance.not_serving(process, self.name)
        server.accepting = False
        _in_loop(server, lambda: wasyncore.dispatcher.close(server))

    def busy(self) -> bool:
        dispatcher = self.server.task_dispatcher
        if dispatcher.active_count or dispatcher.queue:
            return True
        return any(
            channel.requests or channel.total_outbufs_len
            for channel in list(self.server.active_channels.values())
        )

    def close(self) -> None:
        server = self.server
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)
        _in_loop(server, lambda: wasyncore.close_all(server._map))
        self.thread.join(timeout=3)


def _in_loop(server: Any, thunk: Callable[[], object]) -> None:
    """Run ``thunk`` on the listener's loop thread, or here when the loop's wake-up pipe is gone
    (seen once in a whole-suite run: EBADF writing to it while stopping). Stopping must finish all
    the same; a loop left with nothing to watch ends on its next turn (a second at most)."""
    try:
        server.trigger.pull_trigger(thunk)
    except OSError:
        thunk()


def link_warnings(settings: Settings) -> list[str]:
    """What is wrong with the links this install e-mails and prints (sign-in, invites, tracking)."""
    url = urlsplit(settings.dispatch_public_url)
    # A link to loopback, or to the wildcard address the listener binds, opens nowhere else.
    loopback_link = (url.hostname or "") in {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::"}
    loopback_bind = settings.host in {"127.0.0.1", "localhost", "::1"}
    warnings = []
    if loopback_link and not loopback_bind:
        warnings.append(
            f"links point at {settings.dispatch_public_url}, which only this machine can open (if any), "
            f"while the service listens on {settings.host}: set public_url to the address people reach"
        )
    if url.scheme != "https" and not (loopback_link and loopback_bind):
        warnings.append(
            f"links use {url.scheme}:// ({settings.dispatch_public_url}): sign-in links and tokens travel in "
            "the clear; serve behind TLS (docs/operations.md, reverse proxy) and set public_url to https://…"
        )
    return warnings


def deployment_warnings(settings: Settings) -> list[str]:
    """What is wrong with this node's place in a deployment of several."""
    warnings = []
    if settings.local_chain and not settings.engine_db_url.startswith("sqlite"):
        # An engine database on a server is how several nodes share one engine; the embedded
        # chain is a file of this host, so each node would run its own chain under one name.
        warnings.append(
            "the embedded chain eth_local is a file of this host, but the engine database is shared "
            "(PostgreSQL): with more than one node set local_chain = false on every node and reach the "
            "chains as [[chains]] JSON-RPC nodes (docs/operations.md, Several hosts)"
        )
    return warnings


def _private_data_dir(settings: Settings) -> None:
    """Owner-only files from here on, and none left readable by others (issue 33)."""
    filemodes.private_umask()
    filemodes.tighten(settings.data_dir)


def _stop_under_way(_signum: int, _frame: Any) -> None:
    """A stop signal while serve is stopping already: nothing more to do."""


def serve(
    settings: Settings,
    apps: Iterable[tuple[str, Any, int]],
    *,
    workers: Iterable[tuple[str, Worker]] = (),
    announce: Callable[[str], None] = print,
    stop: threading.Event | None = None,
    sockets: dict[str, socket.socket] | None = None,
    balance: tuple[ConnectionBalance, int] | None = None,
) -> None:
    """Serve ``apps`` (name, wsgi app, port) until a signal or ``stop`` is set, then stop cleanly.
    ``sockets`` (by app name) are listening sockets bound already, shared by serving processes;
    ``balance`` is their shared connection count and this process's number in it."""
    if balance is None:  # else serve_processes did it before forking this serving process
        _private_data_dir(settings)
    stop = stop or threading.Event()
    sockets = sockets or {}
    lifecycle.stopping.clear()
    main = threading.current_thread() is threading.main_thread()
    if main:  # the threads started below leave the stop signals to this one (stop_signals_held)
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    listeners = [
        Listener(
            name,
            app,
            settings.host,
            port,
            settings.threads,
            trusted_proxy=settings.trusted_proxy,
            proxy_count=settings.trusted_proxy_count,
            sock=sockets.get(name),
            balance=balance,
            # dispatch takes proof photos up to max_upload_bytes; every other body is JSON
            max_body=max(MAX_BODY_BYTES, settings.max_upload_bytes) if name == "dispatch" else MAX_BODY_BYTES,
            connections_per_client=settings.connections_per_client,
            request_read_seconds=settings.request_read_seconds,
        )
        for name, app, port in apps
    ]
    for warning in [*link_warnings(settings), *deployment_warnings(settings)]:
        log.warning(warning)
        announce(f"warning: {warning}")
    worker_threads = [
        threading.Thread(target=fn, args=(lifecycle.stopping,), name=f"worker-{name}", daemon=True)
        for name, fn in workers
    ]

    # The handler takes no lock: it runs in the main thread between two bytecodes, possibly while
    # that thread holds the lock of stop.wait() below, and a stop.set() (or a log line) there
    # waited for that lock for ever: CI caught a serving process hung on SIGTERM that way (py-spy:
    # Event.set inside on_signal inside Event.wait). It notes the signal and writes a byte that
    # wakes the wait; the main thread does the rest.
    received: list[int] = []
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def on_signal(signum: int, _frame: Any) -> None:
        received.append(signum)
        with contextlib.suppress(OSError):  # a full pipe: a wake-up is pending already
            os.write(wake_write, b"\0")

    if main:
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    # Everything loaded at start-up (apps, OR-Tools, schemas) lives as long as the process: move
    # it out of the collector's way so that full collections during requests stay short.
    gc.collect()
    gc.freeze()
    for listener in listeners:
        listener.start()
        announce(f"{listener.name} listening on {listener.url}")
    for thread in worker_threads:
        thread.start()
    if main:  # whatever the caller held: a stop signal sent meanwhile is handled now
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)

    # Woken by a stop signal's byte, and every second all the same: ``stop`` set by another thread
    # (the tests), or a stop signal taken by a thread started elsewhere (one that does not block
    # it), is then still seen, late by a second instead of never.
    try:
        while not received and not stop.is_set():
            select.select([wake_read], [], [], 1.0)
    finally:
        if main:  # a second signal changes nothing now, and must not write to a closed pipe
            for each in STOP_SIGNALS:
                signal.signal(each, _stop_under_way)
        os.close(wake_read)
        os.close(wake_write)
    if received:
        log.info("received %s, stopping", signal.Signals(received[0]).name)

    for listener in listeners:
        listener.stop_accepting()
    lifecycle.stopping.set()  # event streams and workers end now
    deadline = time.monotonic() + settings.shutdown_grace_seconds
    while time.monotonic() < deadline and any(listener.busy() for listener in listeners):
        time.sleep(0.05)
    for listener in listeners:
        listener.close()
    for thread in worker_threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()) + 1)
    log.info("stopped")


# -- several serving processes ---------------------------------------------------------------------

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
