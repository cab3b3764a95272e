"""Outgoing email: queued in the database in the same transaction as the change that sends it,
then delivered through SMTP (APPLIANCE_SMTP_URL) or written as one RFC 5322 .eml file per message
to <data_dir>/outbox/, with names that sort in sending order.

A failing SMTP server never fails the request and never loses a message: the row stays queued
and the worker retries it with backoff. Rows are claimed with a lease (appliance.common.jobs, the
same helper as the payout worker), so a worker that dies leaves its work to the next one.

One-time secrets do not rest in the database (issue 33): once a message is handed to the SMTP
server or written to the outbox, its row keeps the body with every link token replaced by
``{token}`` (redact_links), so nobody who can read the database can sign in with a mailed link.
The outbox is the mail itself when no SMTP server is set: its folder is 0700 and each file 0600.
"""

from __future__ import annotations

import logging
import os
import re
import smtplib
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlparse

import peewee

from appliance.common import clock
from appliance.common.jobs import LeasedQueue, run_worker

log = logging.getLogger("appliance.mail")

LEASE = timedelta(minutes=2)


TOKEN_PLACEHOLDER = "{token}"
# A URL's host, then the rest of it (path, query, fragment): only the rest can hold a token.
_URL = re.compile(r"(https?://[^/\s?#]+)([^\s<>\"']*)")
# A link token: a run of URL-safe base64 (secrets.token_urlsafe) or hex this long is a secret,
# never a word of a path (the shortest issued today, a tracking token, is 32 characters).
_TOKEN = re.compile(r"[A-Za-z0-9_-]{20,}")


def redact_links(body: str) -> str:
    """``body`` with the token of every link in it replaced by ``{token}``."""
    return _URL.sub(lambda m: m.group(1) + _TOKEN.sub(TOKEN_PLACEHOLDER, m.group(2)), body)


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` atomically, readable by this user only (0600) whatever the umask."""
    temp = path.with_name(f".{path.name}.tmp")
    with os.fdopen(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
        os.fchmod(out.fileno(), 0o600)  # a leftover temp file of another mode
        out.write(data)
    temp.replace(path)


def private_dir(path: Path) -> None:
    """Create ``path`` (0700), or tighten an existing one to 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


class MailTransportError(smtplib.SMTPException):
    """The SMTP URL asks for something the server cannot do safely (credentials without TLS)."""


@contextmanager
def smtp_connection(smtp_url: str, ca_file: str = "") -> Iterator[smtplib.SMTP]:
    """An authenticated connection for ``smtp_url``:

    - ``smtps://user:password@host[:465]``: TLS from the first byte (implicit TLS);
    - ``smtp://user:password@host[:587]``: STARTTLS whenever the server offers it, and always before
      credentials are sent (a server without STARTTLS gets no password); ``?starttls=off`` only for
      a relay on loopback without credentials.

    Certificates are checked against the system store plus ``ca_file``."""
    url = urlparse(smtp_url)
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    host = url.hostname or "localhost"
    starttls = dict(parse_qsl(url.query)).get("starttls", "auto")
    smtp: smtplib.SMTP
    if url.scheme == "smtps":
        smtp = smtplib.SMTP_SSL(host, url.port or 465, timeout=10, context=context)
    elif url.scheme == "smtp":
        smtp = smtplib.SMTP(host, url.port or 25, timeout=10)
    else:
        raise MailTransportError(f"smtp_url must be smtp:// or smtps://, not {url.scheme}://")
    try:
        if url.scheme == "smtp" and starttls != "off":
            smtp.ehlo()
            if smtp.has_extn("starttls"):
                smtp.starttls(context=context)
                smtp.ehlo()
            elif url.username or starttls == "required":
                raise MailTransportError(
                    "the SMTP server offers no STARTTLS: credentials are not sent in the clear"
                )
        if url.username:
            smtp.login(unquote(url.username), unquote(url.password or ""))
        yield smtp
    finally:
        try:
            smtp.quit()
        except (smtplib.SMTPException, OSError):
            smtp.close()


class Mailer:
    def __init__(
        self,
        model: type[peewee.Model],
        database: peewee.DatabaseProxy,
        *,
        smtp_url: str,
        mail_from: str,
        outbox: Path,
        ca_file: str = "",
    ) -> None:
        self.model = model
        self.database = database
        self.smtp_url = smtp_url
        self.mail_from = mail_from
        self.outbox = Path(outbox)
        self.ca_file = ca_file
        self.queue = LeasedQueue(
            model,
            database,
            pending=lambda: model.status == "queued",
            lease=LEASE,
            error_field="last_error",
            backoff_base=5.0,  # 10 s, 20 s, 40 s … capped at 30 minutes, with jitter
        )

    def enqueue(self, to: str, subject: str, body: str) -> int:
        """Queue a message (call inside the transaction of the change that sends it)."""
        row = self.model.create(
            to_address=to, subject=subject, body=body, next_attempt_at=clock.now(), created_at=clock.now()
        )
        return row.id

    # -- delivery ------------------------------------------------------------------------------

    def _message(self, row: peewee.Model) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self.mail_from
        message["To"] = row.to_address
        message["Subject"] = row.subject
        message["Date"] = format_datetime(row.created_at)
        message["Message-ID"] = make_msgid(domain="appliance.local")
        message.set_content(row.body)
        return message

    def _send(self, row: peewee.Model) -> None:
        message = self._message(row)
        if not self.smtp_url:
            private_dir(self.outbox)
            name = f"{row.created_at.strftime('%Y%m%dT%H%M%S%f')}-{row.id:010d}.eml"
            write_private(self.outbox / name, bytes(message))
            return
        with smtp_connection(self.smtp_url, self.ca_file) as smtp:
            smtp.send_message(message)

    def deliver(self, row_id: int) -> bool:
        """Try to deliver one queued message now; True when it went out."""
        if not self.queue.claim_one(row_id):
            return False
        return self._deliver_claimed(row_id)

    def _deliver_claimed(self, row_id: int) -> bool:
        row = self.model.get_by_id(row_id)
        try:
            self._send(row)
        except (OSError, smtplib.SMTPException) as exc:
            self.queue.retry_later(row_id, f"{type(exc).__name__}: {exc}")
            return False
        # Handed over: the row keeps the message without its link tokens.
        self.model.update(
            status="sent",
            sent_at=clock.now(),
            attempts=row.attempts + 1,
            lease_until=None,
            body=redact_links(row.body),
        ).where(self.model.id == row_id).execute()
        return True

    def deliver_due(self, limit: int = 50) -> int:
        """Deliver every message whose time has come; returns how many went out."""
        return sum(1 for row_id in self.queue.claim(limit) if self._deliver_claimed(row_id))

    def worker(self, stop: threading.Event, interval: float = 2.0) -> None:
        """Background retry loop for `appliance serve`."""
        run_worker("mail", self.database, stop, self.deliver_due, idle_seconds=interval)
