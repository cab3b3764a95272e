"""Answers kept by one serving process and served again while what they were made of is unchanged.

The caller names the answer (``place``) and reads, in the database and on every request, a small
``state`` that changes whenever anything the answer depends on changes (revisions raised by
triggers, newest row ids, the rows' own columns). A kept answer is served only under the very
state it was made from, so a change committed by any process or host is seen at once; the caller
keeps an answer only when the state read before and after making it is the same.

A large kept answer is also kept gzip-compressed, made once on its first request by a client that
accepts gzip (every browser does): a day of 2,000 orders is 1.2 MB of JSON and 73 KB compressed,
which the server then sends sixteen times faster and never compresses twice."""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Any

from flask import Response

from appliance.common import clock
from appliance.common.webapp import COMPRESS_FROM_BYTES, gzip_when_accepted

GZIP_LEVEL = 6  # once per kept answer: the smallest it is worth making


class Answer:
    """One encoded JSON answer and, once asked for, its gzip form."""

    __slots__ = ("_gzipped", "body")

    def __init__(self, body: bytes) -> None:
        self.body = body
        self._gzipped: bytes | None = None

    def gzipped(self) -> bytes:
        if self._gzipped is None:  # two threads may both compress once: the same bytes either way
            self._gzipped = gzip.compress(self.body, GZIP_LEVEL, mtime=0)
        return self._gzipped


class KeptAnswers:
    """At most ``size`` encoded answers, the least recently served dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[Any, tuple[Any, Answer, datetime | None]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, place: Any, state: Any, *, max_age: timedelta | None = None) -> Answer | None:
        """The answer kept under ``state``; with ``max_age``, only one made from a state read less
        than that long ago (an answer that also shows the time: a fix growing stale)."""
        with self._lock:
            kept = self._answers.get(place)
            if kept is None or kept[0] != state:
                return None
            if max_age is not None and (kept[2] is None or clock.now() - kept[2] >= max_age):
                return None
            self._answers.move_to_end(place)
            return kept[1]

    def put(self, place: Any, state: Any, answer: Answer, *, read_at: datetime | None = None) -> None:
        """Keeps ``answer`` made from ``state`` (read at ``read_at``, for ``get``'s ``max_age``)."""
        with self._lock:
            self._answers[place] = (state, answer, read_at)
            self._answers.move_to_end(place)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def __contains__(self, place: Any) -> bool:
        return place in self._answers


def json_response(answer: Answer, *, kept: bool) -> Response:
    """The answer as application/json; a large kept answer gzip-compressed once for the clients
    that take gzip (any other large answer is compressed per request, at the fast level, by the
    base app: appliance/common/webapp.py)."""
    response = Response(answer.body, mimetype="application/json")
    if kept and len(answer.body) >= COMPRESS_FROM_BYTES:
        gzip_when_accepted(response, answer.gzipped)
    return response
