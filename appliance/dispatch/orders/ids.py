"""Path and body ids: integers the database can hold. An id outside 1..2**63-1 cannot name a row,
so it behaves exactly as a missing one (404) instead of overflowing the database driver."""

from __future__ import annotations

from collections.abc import Iterable

from appliance.common.problems import NotFound

MAX_ID = 2**63 - 1


def storable(value: int) -> bool:
    return 0 < value <= MAX_ID


def require(value: int, what: str = "resource") -> int:
    """``value`` when it can name a row; 404 otherwise."""
    if not storable(value):
        raise NotFound(f"No such {what}.")
    return value


def require_all(values: Iterable[int], what: str = "resource") -> None:
    for value in values:
        require(value, what)
