"""Reading the e-mails the service sends as a mail client would (they are MIME-encoded: Armenian
and Russian texts travel as UTF-8 in a transfer encoding)."""

from __future__ import annotations

from email import message_from_bytes, policy
from pathlib import Path


def mail_text(raw: bytes | Path) -> str:
    """Subject and decoded body of one message (an .eml file or the bytes an SMTP server got)."""
    data = raw.read_bytes() if isinstance(raw, Path) else raw
    message = message_from_bytes(data, policy=policy.default)
    return f"Subject: {message['Subject']}\nTo: {message['To']}\n\n{message.get_content()}"
