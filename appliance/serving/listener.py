"""One waitress listener of one app on one port: waitress's server with the appliance's channel
(common/server_channel.py), its limits, the warm-thread task queue and, among several serving
processes, the connection balance patched into its poll loop."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import Any

from waitress import wasyncore
from waitress.server import create_server

from appliance.common.server_channel import CLEANUP_SECONDS, serve_with_channel
from appliance.common.webapp import MAX_BODY_BYTES
from appliance.serving.balance import ConnectionBalance, _WakeUp
from appliance.serving.task_queue import _task_dispatcher

log = logging.getLogger("appliance.server")  # one logger for serving, as before the split

# Bytes of one connection's unsent answer held in memory before waitress spills it to a file.
OUTBUF_IN_MEMORY = 8 * 1024 * 1024


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
