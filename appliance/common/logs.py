"""One log line per event, whatever the values in it: control characters in a message (a path
with %0A decoded from the URL, a header, a name) are escaped, so nobody can forge log lines or
request ids. Tracebacks keep their line breaks: they are appended after the escaped message."""

from __future__ import annotations

import logging
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def escape_control(text: str) -> str:
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1] if m.group() != "\x7f" else "\\x7f", text)


class SafeFormatter(logging.Formatter):
    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escape_control(record.message)
        return super().formatMessage(record)
