"""Answers kept by one serving process and served again while what they were made of is unchanged.

The caller names the answer (``place``) and reads, in the database and on every request, a small
``state`` that changes whenever anything the answer depends on changes (revisions raised by
triggers, newest row ids, the rows' own columns). A kept answer is served only under the very
state it was made from, so a change committed by any process or host is seen at once; the caller
keeps an answer only when the state read before and after making it is the same."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class KeptAnswers:
    """At most ``size`` encoded answers, the least recently served dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: OrderedDict[Any, tuple[Any, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, place: Any, state: Any) -> bytes | None:
        with self._lock:
            kept = self._answers.get(place)
            if kept is None or kept[0] != state:
                return None
            self._answers.move_to_end(place)
            return kept[1]

    def put(self, place: Any, state: Any, body: bytes) -> None:
        with self._lock:
            self._answers[place] = (state, body)
            self._answers.move_to_end(place)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def __contains__(self, place: Any) -> bool:
        return place in self._answers
