"""Serve both WSGI apps with waitress, each on its own port, until SIGINT or SIGTERM.

On a stop signal the listeners close first (no new connections), requests in flight finish and
their responses are flushed (up to ``shutdown_grace_seconds``), long-lived event streams and
background workers are told to end, and the process exits 0.
"""

from __future__ import annotations

import gc
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from waitress import wasyncore
from waitress.server import create_server

from appliance.common import lifecycle
from appliance.settings import Settings

log = logging.getLogger("appliance.server")

Worker = Callable[[threading.Event], None]


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
    ) -> None:
        self.name = name
        proxy: dict[str, Any] = {}
        if trusted_proxy:
            # The client's address (rate limits per real client) and scheme come from the proxy.
            proxy = {
                "trusted_proxy": trusted_proxy,
                "trusted_proxy_count": proxy_count,
                "trusted_proxy_headers": {"x-forwarded-for", "x-forwarded-proto", "x-forwarded-host"},
            }
        self.server: Any = create_server(
            app,
            host=host,
            port=port,
            threads=threads,
            ident="appliance",
            channel_timeout=120,
            connection_limit=1000,
            clear_untrusted_proxy_headers=True,
            **proxy,
        )
        self.thread = threading.Thread(target=self.server.run, name=f"{name}-http", daemon=True)

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
        server.accepting = False
        server.trigger.pull_trigger(lambda: wasyncore.dispatcher.close(server))

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
        server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        self.thread.join(timeout=3)


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


def serve(
    settings: Settings,
    apps: Iterable[tuple[str, Any, int]],
    *,
    workers: Iterable[tuple[str, Worker]] = (),
    announce: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> None:
    """Serve ``apps`` (name, wsgi app, port) until a signal or ``stop`` is set, then stop cleanly."""
    stop = stop or threading.Event()
    lifecycle.stopping.clear()
    listeners = [
        Listener(
            name,
            app,
            settings.host,
            port,
            settings.threads,
            trusted_proxy=settings.trusted_proxy,
            proxy_count=settings.trusted_proxy_count,
        )
        for name, app, port in apps
    ]
    for warning in link_warnings(settings):
        log.warning(warning)
        announce(f"warning: {warning}")
    worker_threads = [
        threading.Thread(target=fn, args=(lifecycle.stopping,), name=f"worker-{name}", daemon=True)
        for name, fn in workers
    ]

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    if threading.current_thread() is threading.main_thread():
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

    stop.wait()

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
