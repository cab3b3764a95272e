"""Routes already asked for, reused for a short while.

A route depends only on its points and the road data, so the same question asked again (every
recipient's tracking page refreshes on its own, every dispatcher's board asks for the same
couriers' estimates) gets the stored answer instead of another search on the roads. A new GPS fix
or a change to a courier's run changes the points, so it is a new question: nothing needs to be
invalidated. Answers expire after ``ttl`` seconds so that rebuilt road data is picked up, and only
road answers are kept (a straight-line fallback while the engine rests is not worth keeping)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from appliance.dispatch.routing.engines import Point, Router, RouteResult


class RouteMemo:
    def __init__(self, router: Router, *, size: int = 4096, ttl: float = 60.0) -> None:
        self.router = router
        self.size = size
        self.ttl = ttl
        self._entries: OrderedDict[tuple[Point, ...], tuple[float, RouteResult]] = OrderedDict()
        self._lock = threading.Lock()

    def route(self, points: Sequence[Point]) -> RouteResult:
        key = tuple((float(lat), float(lon)) for lat, lon in points)
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] > now:
                self._entries.move_to_end(key)
                return entry[1]
        result = self.router.route(points)
        if result.method == "road" or self.router.engine is None:
            with self._lock:
                self._entries[key] = (now + self.ttl, result)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return result

    @property
    def engine(self) -> object | None:
        """The road engine behind the memo (None: straight lines only), as on Router."""
        return self.router.engine
