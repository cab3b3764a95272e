"""Reading the e-mails the service sends as a mail client would (they are MIME-encoded: Armenian
and Russian texts travel as UTF-8 in a transfer encoding).

A request only queues mail; the mail worker sends it (appliance/common/mail.py). An app under a
test client runs no worker, so ``sent_mail`` runs the worker's pass itself before reading the
outbox; against a real server, ``wait_for_mail`` waits for the server's worker to write it."""

from __future__ import annotations

import time
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any


def mail_text(raw: bytes | Path) -> str:
    """Subject and decoded body of one message (an .eml file or the bytes an SMTP server got)."""
    data = raw.read_bytes() if isinstance(raw, Path) else raw
    message = message_from_bytes(data, policy=policy.default)
    return f"Subject: {message['Subject']}\nTo: {message['To']}\n\n{message.get_content()}"


def send_queued(app_or_client: Any) -> int:
    """The mail worker's passes over everything due, as `appliance serve` runs them; how many
    messages went out."""
    app = getattr(app_or_client, "application", app_or_client)
    mailer = app.extensions["dispatch"].mailer
    sent = 0
    while (count := mailer.deliver_due()) > 0:
        sent += count
    return sent


def sent_mail(app_or_client: Any) -> list[Path]:
    """The outbox's .eml files in sending order, once the queued mail is sent."""
    app = getattr(app_or_client, "application", app_or_client)
    send_queued(app)
    outbox = app.extensions["dispatch"].settings.data_dir / "outbox"
    return sorted(outbox.glob("*.eml")) if outbox.exists() else []


def wait_for_mail(outbox: Path, before: int = 0, seconds: float = 30.0) -> list[Path]:
    """The .eml files of a running server's outbox once there are more than ``before`` (its
    worker sends each message as it is queued); a failure after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        files = sorted(outbox.glob("*.eml")) if outbox.exists() else []
        if len(files) > before:
            return files
        if time.monotonic() > deadline:
            raise AssertionError(f"no new mail in {outbox} within {seconds:.0f} s")
        time.sleep(0.1)
