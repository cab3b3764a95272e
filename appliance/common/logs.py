"""One log line per event, whatever the values in it: control characters in a message (a path
with %0A decoded from the URL, a header, a name) are escaped, so nobody can forge log lines or
request ids. Tracebacks keep their line breaks: they are appended after the escaped message."""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def escape_control(text: str) -> str:
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1] if m.group() != "\x7f" else "\\x7f", text)


class SafeFormatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_control(record.message)
        return super().formatMessage(record)


# Attributes every LogRecord has; anything else on a record came from ``extra=`` and is logged.
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line (APPLIANCE_LOG_FORMAT=json): time, level, logger, message, the
    record's ``extra`` fields (an access line's method, path, status, ms, request_id) and the
    traceback as one string. JSON escapes every control character, so no value can break a line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)
