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
"""

from __future__ import annotations

import copy
from typing import Any

from waitress.task import WSGITask

from appliance.common.server_problems import ProblemChannel

# Answers up to this size (headers aside) are sent whole by the loop thread; above it, the
# serving thread starts sending while it writes, as waitress does.
WHOLE_ANSWER_BYTES = 256 * 1024
_AT_ONCE = 1  # waitress's send_bytes: send what is written at once


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

    def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        # The connection's own copy of the server's settings: its tasks change send_bytes.
        super().__init__(server, sock, addr, copy.copy(adj), map)


def serve_with_channel(server: Any) -> Any:
    """Make ``server`` (from waitress.create_server) use ServingChannel; a server of several
    sockets holds one waitress server per socket in its map."""
    for each in [server, *getattr(server, "map", {}).values()]:
        if hasattr(each, "channel_class"):
            each.channel_class = ServingChannel
    return server
