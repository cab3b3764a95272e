"""Which backups are kept: the newest ``last``, and the newest backup of each of the last
``hourly`` hours, ``daily`` days and ``weekly`` ISO weeks that have one (UTC), as restic's
``forget --keep-*`` counts them: a period without a backup is not counted. The newest backup whose
restore drill passed is kept whatever the counts say, so that pruning never leaves only backups
that do not restore."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from datetime import datetime


@dataclasses.dataclass(frozen=True)
class Retention:
    last: int
    hourly: int
    daily: int
    weekly: int


PERIODS: tuple[tuple[str, Callable[[datetime], tuple[int, ...]]], ...] = (
    ("hourly", lambda t: (t.year, t.month, t.day, t.hour)),
    ("daily", lambda t: (t.year, t.month, t.day)),
    ("weekly", lambda t: tuple(t.isocalendar())[:2]),
)


def to_keep(
    backups: Iterable[tuple[str, datetime]], rule: Retention, protected: str | None = None
) -> set[str]:
    """The names to keep among ``backups`` (name, when taken); ``protected`` is kept in any case."""
    newest_first = sorted(backups, key=lambda b: (b[1], b[0]), reverse=True)
    keep = {name for name, _ in newest_first[: rule.last]}
    for period, key in PERIODS:
        wanted = getattr(rule, period)
        seen: set[tuple[int, ...]] = set()
        for name, moment in newest_first:
            if len(seen) >= wanted:
                break
            if key(moment) not in seen:
                seen.add(key(moment))
                keep.add(name)
    if protected is not None and protected in {name for name, _ in newest_first}:
        keep.add(protected)
    return keep
