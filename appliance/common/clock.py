"""The one source of the current time, replaceable in tests (expiry, windows, working days)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

YEREVAN = ZoneInfo("Asia/Yerevan")

_offset = timedelta(0)
_frozen: datetime | None = None


def now() -> datetime:
    """Current time, timezone-aware UTC."""
    if _frozen is not None:
        return _frozen
    return datetime.now(UTC) + _offset


def unix() -> int:
    return int(now().timestamp()) if (_frozen is not None or _offset) else int(time.time())


def freeze(at: datetime | None) -> None:
    """Tests: stop the clock at ``at`` (None lets it run again)."""
    global _frozen
    _frozen = at.astimezone(UTC) if at is not None else None


def advance(delta: timedelta) -> None:
    """Tests: move the clock forward (or back) by ``delta``."""
    global _offset, _frozen
    if _frozen is not None:
        _frozen = _frozen + delta
    else:
        _offset = _offset + delta


def reset() -> None:
    global _offset, _frozen
    _offset = timedelta(0)
    _frozen = None


def iso(value: datetime | None) -> str | None:
    """ISO 8601 with offset, UTC, millisecond precision; None stays None."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def wire(value: datetime | str | None) -> str | None:
    """``iso`` for values straight from the database: SQLite text written by UTCDateTimeField
    ("YYYY-MM-DD HH:MM:SS.ffffff", UTC) is reformatted without parsing; datetimes go through iso."""
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) >= 23 and value[10] == " ":
            return f"{value[:10]}T{value[11:23]}Z"
        return iso(datetime.fromisoformat(value))
    return iso(value)
