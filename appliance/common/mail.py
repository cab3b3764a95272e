"""Outgoing email: queued in the database in the same transaction as the change that sends it,
then delivered through SMTP (APPLIANCE_SMTP_URL) or written as one RFC 5322 .eml file per message
to <data_dir>/outbox/, with names that sort in sending order.

A failing SMTP server never fails the request and never loses a message: the row stays queued
and the worker retries it with backoff. Rows are claimed with a lease (appliance.common.jobs, the
same helper as the payout worker), so a worker that dies leaves its work to the next one.

Requests only queue: the worker sends (issue 41), so no SMTP round trip or file write happens
while a request is answered. A request that mails only when an account exists (a sign-in link, a
password link) queues the same one row either way (``enqueue_composed``: a kind and an address);
the worker looks the account up and composes the message through the service's composer for that
kind, or deletes the row when there is nothing to send, so the request's time and database work
tell nobody whether an account exists. The commit wakes this process's worker at once
(``wake``); a worker in another process looks every second.

One-time secrets do not rest in the database (issues 33 and 41): a queued row's body has every
link token replaced by ``{token}`` from the moment it is queued, and the tokens themselves rest
sealed beside it (``link_tokens``: AES-GCM under the ``mail-link-tokens`` subkey of
appliance.key, bound to the row), from which the sender rebuilds the links; once the message is
handed over the sealed tokens are dropped. The outbox is the mail itself when no SMTP server is
set: its folder is 0700 and each file 0600.

A message that cannot be built (a header with a line break queued by an older version, tokens
that no longer unseal) is failed with the reason at its first attempt: never retried, and never
in the way of the messages queued after it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import smtplib
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlparse

import peewee

from appliance.common import clock, keys
from appliance.common.db import after_commit, write_transaction
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


# In a link's tail: a placeholder already there (kept as itself) or a token.
_PLACEHOLDER_OR_TOKEN = re.compile(re.escape(TOKEN_PLACEHOLDER) + "|" + _TOKEN.pattern)
_PLACEHOLDER = re.compile(re.escape(TOKEN_PLACEHOLDER))


def split_links(body: str) -> tuple[str, list[str]]:
    """``body`` redacted as ``redact_links`` does, and what each ``{token}`` of its links stood
    for, in order (a literal ``{token}`` in a link stands for itself), so that ``join_links``
    gives ``body`` back exactly."""
    taken: list[str] = []

    def tail(match: re.Match[str]) -> str:
        taken.append(match.group(0))
        return TOKEN_PLACEHOLDER

    redacted = _URL.sub(lambda m: m.group(1) + _PLACEHOLDER_OR_TOKEN.sub(tail, m.group(2)), body)
    return redacted, taken


def join_links(redacted: str, tokens: list[str]) -> str:
    """The body ``split_links`` redacted, its links whole again."""
    left = iter(tokens)

    def token(_match: re.Match[str]) -> str:
        value = next(left, None)
        if value is None:
            raise ValueError("fewer sealed link tokens than the message has links")
        return value

    joined = _URL.sub(lambda m: m.group(1) + _PLACEHOLDER.sub(token, m.group(2)), redacted)
    if next(left, None) is not None:
        raise ValueError("more sealed link tokens than the message has links")
    return joined


# What a header may not hold: control characters (a CR or LF would start another header) and the
# line and paragraph separators.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` fit for a header: each run of control characters becomes one space. Names are
    refused at the schemas already; this keeps a name stored by an older version from making
    every later mail of its company unbuildable."""
    return _BREAKS.sub(" ", text).strip()


LINK_TOKENS = "mail-link-tokens"


class UnbuildableMessage(ValueError):
    """A queued row from which no message can be made: failed, never retried."""


# A service's composer for one kind of message queued by address: run by the worker inside its
# write transaction, it gives (to, subject, body) to send, or None when there is nothing to send
# (no such account).
Composer = Callable[[str], tuple[str, str, str] | None]


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
        master_key: bytes,
        ca_file: str = "",
    ) -> None:
        self.model = model
        self.master_key = master_key
        # Set when a message is queued (once its transaction commits): the worker sends at once.
        self.wake = threading.Event()
        # The kinds of message queued by address (enqueue_composed), composed by the worker.
        self.composers: dict[str, Composer] = {}
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
        """Queue a message (call inside the transaction of the change that sends it): its body
        without link tokens, the tokens sealed beside it. The worker is woken once it commits."""
        moment = clock.now()
        row = self.model.create(
            to_address=to,
            subject=one_line(subject),
            body=redact_links(body),
            next_attempt_at=moment,
            created_at=moment,
        )
        sealed = self._seal_links(row.id, body)
        if sealed["link_tokens"] is not None:
            self.model.update(sealed).where(self.model.id == row.id).execute()
        after_commit(self.database, self.wake.set)
        return row.id

    def enqueue_composed(self, kind: str, address: str) -> None:
        """Queue a message of ``kind`` for ``address`` that the worker composes (call inside a
        write transaction): one row, the same whether or not anything will be sent."""
        moment = clock.now()
        self.model.create(
            to_address=address, subject="", body="", compose=kind, next_attempt_at=moment, created_at=moment
        )
        after_commit(self.database, self.wake.set)

    # -- delivery ------------------------------------------------------------------------------

    def _seal_links(self, row_id: int, body: str) -> dict[str, object]:
        """The row's columns for ``body``: redacted, and its link tokens sealed (None without)."""
        redacted, tokens = split_links(body)
        context = self._context(row_id)
        sealed = keys.seal(self.master_key, LINK_TOKENS, context, json.dumps(tokens)) if tokens else None
        return {"body": redacted, "link_tokens": sealed}

    def _compose(self, row: peewee.Model) -> peewee.Model | None:
        """The claimed row of a message queued by address, composed (its body redacted, the link
        tokens sealed); None when there was nothing to send (the row is gone)."""
        composer = self.composers.get(row.compose)
        if composer is None:
            raise UnbuildableMessage(f"no composer for {row.compose!r} in this process")
        with write_transaction(self.database):
            made = composer(row.to_address)
            if made is None:
                self.model.delete().where(self.model.id == row.id).execute()
                return None
            to, subject, body = made
            sealed = self._seal_links(row.id, body)
            changes = {"to_address": to, "subject": one_line(subject), "compose": None, **sealed}
            self.model.update(changes).where(self.model.id == row.id).execute()
        return self.model.get_by_id(row.id)

    @staticmethod
    def _context(row_id: int) -> str:
        return f"outgoing_mail:{row_id}"

    def _body(self, row: peewee.Model) -> str:
        """The message's text with its links whole (a row queued before issue 41 holds them)."""
        if row.link_tokens is None:
            return row.body
        tokens = json.loads(keys.unseal(self.master_key, LINK_TOKENS, self._context(row.id), row.link_tokens))
        return join_links(row.body, tokens)

    def _message(self, row: peewee.Model) -> EmailMessage:
        """The message as it will go out, or UnbuildableMessage saying why it cannot."""
        try:
            message = EmailMessage()
            message["From"] = self.mail_from
            message["To"] = row.to_address
            message["Subject"] = row.subject
            message["Date"] = format_datetime(row.created_at)
            message["Message-ID"] = make_msgid(domain="appliance.local")
            message.set_content(self._body(row))
            message.as_bytes()  # what cannot be written out fails here, not half-way through a send
        except Exception as exc:  # whatever the row holds, it must not stop the pass
            raise UnbuildableMessage(f"{type(exc).__name__}: {exc}") from exc
        return message

    def _send(self, row: peewee.Model, message: EmailMessage) -> None:
        if not self.smtp_url:
            private_dir(self.outbox)
            name = f"{row.created_at.strftime('%Y%m%dT%H%M%S%f')}-{row.id:010d}.eml"
            write_private(self.outbox / name, bytes(message))
            return
        with smtp_connection(self.smtp_url, self.ca_file) as smtp:
            smtp.send_message(message)

    def _fail(self, row: peewee.Model, reason: str) -> None:
        self.model.update(
            status="failed",
            attempts=row.attempts + 1,
            lease_until=None,
            lease_holder=None,
            last_error=f"cannot be built: {reason}"[:500],
            link_tokens=None,
        ).where(self.model.id == row.id).execute()
        log.warning("mail %s failed for good: %s", row.id, reason)

    def _deliver_claimed(self, row_id: int) -> bool:
        row = self.model.get_by_id(row_id)
        try:
            if row.compose is not None:
                row = self._compose(row)
                if row is None:
                    return False
            message = self._message(row)
        except UnbuildableMessage as exc:
            self._fail(row, str(exc))
            return False
        except Exception as exc:  # composing met a fault (a busy database): later, the pass goes on
            self.queue.retry_later(row_id, f"{type(exc).__name__}: {exc}")
            return False
        try:
            self._send(row, message)
        except Exception as exc:  # a transport failure, or any other: the row waits, the pass goes on
            self.queue.retry_later(row_id, f"{type(exc).__name__}: {exc}")
            return False
        # Handed over: the row keeps the message without its link tokens (a row queued before
        # issue 41 has them in its body), and the sealed tokens go.
        self.model.update(
            status="sent",
            sent_at=clock.now(),
            attempts=row.attempts + 1,
            lease_until=None,
            body=redact_links(row.body),
            link_tokens=None,
        ).where(self.model.id == row_id).execute()
        return True

    def _anything_due(self) -> bool:
        """A read before the claim's write transaction: an idle pass takes no write lock."""
        m = self.model
        due = (m.status == "queued") & (m.next_attempt_at.is_null() | (m.next_attempt_at <= clock.now()))
        return m.select(m.id).where(due).exists()

    def deliver_due(self, limit: int = 50) -> int:
        """Deliver every message whose time has come; returns how many went out. Each row is
        handled on its own: one that fails (for now or for good) never stops the others."""
        if not self._anything_due():
            return 0
        return sum(1 for row_id in self.queue.claim(limit) if self._deliver_claimed(row_id))

    def worker(self, stop: threading.Event, interval: float = 1.0) -> None:
        """The sending loop of `appliance serve`: woken by each message this process queues,
        else looking every ``interval`` seconds (messages other processes queued, retries)."""
        run_worker("mail", self.database, stop, self.deliver_due, idle_seconds=interval, wake=self.wake)
