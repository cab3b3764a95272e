"""One serving process: both WSGI apps, each on its own port, and the background workers, until
SIGINT or SIGTERM (or ``stop``).

On a stop signal the listeners close first (no new connections), requests in flight finish and
their responses are flushed (up to ``shutdown_grace_seconds``), long-lived event streams and
background workers are told to end, and the process exits 0.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from appliance.common import filemodes, lifecycle
from appliance.common.webapp import MAX_BODY_BYTES
from appliance.serving.balance import ConnectionBalance
from appliance.serving.listener import Listener
from appliance.serving.signals import STOP_SIGNALS, _stop_under_way
from appliance.serving.startup_warnings import deployment_warnings, link_warnings
from appliance.settings import Settings

log = logging.getLogger("appliance.server")  # one logger for serving, as before the split

Worker = Callable[[threading.Event], None]


def _private_data_dir(settings: Settings) -> None:
    """Owner-only files from here on, and none left readable by others (issue 33)."""
    filemodes.private_umask()
    filemodes.tighten(settings.data_dir)


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
