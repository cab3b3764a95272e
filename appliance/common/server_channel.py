"""The waitress channel both services are served with: waitress's own errors as Problems
(server_problems), and answers of known length sent whole by the server's loop thread.

waitress has the serving thread send whatever its task writes at once (``send_bytes`` is 1, so
that a stream's small chunks are not held back): the header block with one send, the body with
another, each a system call during which the thread gives up the interpreter lock, which under
load hands it to another thread and back. Then the task ends and wakes the loop thread, which
has to run anyway (to watch the connection for its next request). An answer whose length is
known and small is instead written whole into the connection's buffer and sent by that loop
thread in one send: measured on GET /track with two serving processes (wrk, eight connections),
14-18 context switches per request fell to 7-8, and requests per second rose by about half.
Streams (no length: events, CSV exports) and large answers are still sent as they are written.

While a whole answer is written nothing wakes the loop thread (no send, no trigger: the buffer
stays under ``send_bytes``); it may well be asleep in poll() then, for up to its one-second
timeout. What wakes it is the trigger waitress pulls as the task ends (``HTTPChannel.service``),
after ``finish`` has set ``send_bytes`` back and the request was taken off the queue, so the
loop's next turn finds the answer writable. Were that pull lost (a waitress upgrade, a channel
overriding ``service``), every answer would wait out the poll timeout:
tests/common/test_server_channel.py fails then. Issue 30 suspected exactly that for its tails of
just under a second; instrumented (every poll that ran out its timeout, with each connection's
buffer and queue), no poll did while an answer waited, in some 200,000 requests through a real
``appliance serve`` and 130,000 through a Listener (docs/operations.md, Sizing).

It also keeps slow and greedy clients from starving the port (docs/operations.md, Slow clients):
a client address holding more than its share of connections has the next one closed at once, and
a request that is still arriving after ``request_read_seconds`` is closed unless it keeps up at
least 8 KB/s (waitress's own ``channel_timeout`` only closes a channel idle for that long, so a
header trickled a byte every few seconds held its connection for ever).
"""

from __future__ import annotations

import copy
import time
from typing import Any

from waitress.task import WSGITask

from appliance.common.server_problems import ProblemChannel

# Answers up to this size (headers aside) are sent whole by the loop thread; above it, the
# serving thread starts sending while it writes, as waitress does.
WHOLE_ANSWER_BYTES = 256 * 1024
_AT_ONCE = 1  # waitress's send_bytes: send what is written at once
# A request still arriving after its grace must have averaged this rate past it (a phone's photo
# over a slow mobile link still does; a header trickled a byte at a time does not).
SLOWEST_BYTES_PER_SECOND = 8 * 1024
# How often the server looks for slow requests and idle channels (waitress: every 30 s).
CLEANUP_SECONDS = 2


class WholeAnswerTask(WSGITask):
    def write(self, data: bytes) -> None:
        if not self.wrote_header:  # the first write: status and headers are known now
            whole = self.content_length is not None and self.content_length <= WHOLE_ANSWER_BYTES
            self.channel.adj.send_bytes = WHOLE_ANSWER_BYTES + 1 if whole else _AT_ONCE
        super().write(data)

    def finish(self) -> None:
        super().finish()
        self.channel.adj.send_bytes = _AT_ONCE


class ServingChannel(ProblemChannel):
    task_class = WholeAnswerTask
    # The request being read (waitress's parser, None between requests), since when, and how many
    # bytes of it have arrived.
    _reading: Any = None
    reading_since = 0.0
    reading_bytes = 0

    def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        # The connection's own copy of the server's settings: its tasks change send_bytes.
        super().__init__(server, sock, addr, copy.copy(adj), map)
        limit = getattr(server, "connections_per_client", 0)
        if limit and _connections_from(server, addr) > limit:
            self.close()

    def received(self, data: bytes) -> bool:
        result = super().received(data)
        if self.request is not self._reading:  # a request began (or the last one was read whole)
            self._reading, self.reading_since, self.reading_bytes = self.request, time.time(), 0
        self.reading_bytes += len(data)
        return result

    def too_slow(self, now: float, grace: float) -> bool:
        """Whether the request being read has taken longer than ``grace`` seconds and has not kept
        up SLOWEST_BYTES_PER_SECOND past it."""
        if self._reading is None or self.requests:  # nothing arriving, or answering first
            return False
        late = now - self.reading_since - grace
        return late > 0 and self.reading_bytes < late * SLOWEST_BYTES_PER_SECOND


def _connections_from(server: Any, addr: Any) -> int:
    host = addr[0] if isinstance(addr, tuple) and addr else None
    if host is None:  # a Unix socket: no address to count by
        return 0
    return sum(
        1 for channel in list(server.active_channels.values()) if channel.addr and channel.addr[0] == host
    )


def _closing_slow_requests(server: Any, grace: float) -> None:
    waitress_maintenance = server.maintenance  # closes channels idle for channel_timeout

    def maintenance(now: float) -> None:
        waitress_maintenance(now)
        for channel in list(server.active_channels.values()):
            if isinstance(channel, ServingChannel) and channel.too_slow(now, grace):
                channel.will_close = True  # closed on the loop's next turn

    server.maintenance = maintenance


def serve_with_channel(
    server: Any, *, connections_per_client: int = 0, request_read_seconds: float = 30.0
) -> Any:
    """Make ``server`` (from waitress.create_server) use ServingChannel; a server of several
    sockets holds one waitress server per socket in its map. ``connections_per_client``: the
    connections one client address may hold (0: any); ``request_read_seconds``: the grace a
    request has to arrive before it must keep up SLOWEST_BYTES_PER_SECOND."""
    for each in [server, *getattr(server, "map", {}).values()]:
        if hasattr(each, "channel_class"):
            each.channel_class = ServingChannel
            each.connections_per_client = connections_per_client
            _closing_slow_requests(each, request_read_seconds)
    return server
