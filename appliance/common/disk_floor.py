"""The free-space floor of the `disk` readiness check, sized from the write rate (issue 32).

A fixed floor (``min_free_disk_mb``) is right for a quiet appliance and too low for a busy one: a
company with many couriers sending GPS writes tens of MB a minute, and 128 MB is gone before anyone
reads the alarm. So the floor is also sized from how fast the data directory's filesystem has
been filling: the check fails once the free space left would last less than
``disk_headroom_minutes`` at the rate it fell over the last ten minutes. Whatever fills the
filesystem counts (the appliance's databases, its outbox and objects, or another program's files),
since it is the free space that runs out.

Each serving process keeps its own samples of the free space (taken when its health is probed, at
most every few seconds); the filesystem is the same for all, so they agree once each has seen a
minute of history. Until then only the fixed floor applies: a rate over a few seconds is noise.
"""

from __future__ import annotations

import math
import threading
from collections import deque

MB = 1024 * 1024
SAMPLE_EVERY_SECONDS = 5.0
WINDOW_SECONDS = 600.0
MIN_SPAN_SECONDS = 60.0


class FreeSpaceTrend:
    """Free space seen over the last ``WINDOW_SECONDS``, and how fast it has been falling."""

    def __init__(self) -> None:
        self._samples: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()

    def observe(self, now: float, free_bytes: int) -> float | None:
        """Record a sample; answer the bytes per second the free space fell across the window (0
        when it rose or held), or None while the samples span less than ``MIN_SPAN_SECONDS``."""
        with self._lock:
            if not self._samples or now - self._samples[-1][0] >= SAMPLE_EVERY_SECONDS:
                self._samples.append((now, free_bytes))
            while len(self._samples) > 2 and now - self._samples[1][0] >= WINDOW_SECONDS:
                self._samples.popleft()
            oldest_at, oldest_free = self._samples[0]
        span = now - oldest_at
        if span < MIN_SPAN_SECONDS:
            return None
        return max(0.0, (oldest_free - free_bytes) / span)


def floor_mb(min_free_mb: int, headroom_minutes: int, fill_bytes_per_second: float | None) -> int:
    """The free space (MB) below which the check fails: the fixed floor, or what the last minutes'
    write rate would use up in ``headroom_minutes``, whichever is larger."""
    if not headroom_minutes or not fill_bytes_per_second:
        return min_free_mb
    return max(min_free_mb, math.ceil(fill_bytes_per_second * headroom_minutes * 60 / MB))
