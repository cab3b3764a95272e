"""Outgoing email: queued in the database in the same transaction as the change that sends it,
then delivered through SMTP (APPLIANCE_SMTP_URL) or written as one RFC 5322 .eml file per message
to <data_dir>/outbox/, with names that sort in sending order.

A failing SMTP server never fails the request and never loses a message: the row stays queued
and the worker retries it with backoff. Rows are claimed with a lease, so a worker that dies
leaves its work to the next one.
"""

from __future__ import annotations

import logging
import smtplib
import threading
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from urllib.parse import unquote, urlparse

import peewee

from appliance.common import clock

log = logging.getLogger("appliance.mail")

LEASE = timedelta(minutes=2)
MAX_BACKOFF = timedelta(minutes=30)


class Mailer:
    def __init__(
        self,
        model: type[peewee.Model],
        database: peewee.DatabaseProxy,
        *,
        smtp_url: str,
        mail_from: str,
        outbox: Path,
    ) -> None:
        self.model = model
        self.database = database
        self.smtp_url = smtp_url
        self.mail_from = mail_from
        self.outbox = Path(outbox)

    def enqueue(self, to: str, subject: str, body: str) -> int:
        """Queue a message (call inside the transaction of the change that sends it)."""
        row = self.model.create(
            to_address=to, subject=subject, body=body, next_attempt_at=clock.now(), created_at=clock.now()
        )
        return row.id

    # -- delivery ------------------------------------------------------------------------------

    def _claim(self, row_id: int) -> bool:
        m = self.model
        moment = clock.now()
        claimable = (m.status == "queued") | ((m.status == "sending") & (m.lease_until < moment))
        updated = (
            m.update(status="sending", lease_until=moment + LEASE)
            .where((m.id == row_id) & claimable & (m.next_attempt_at <= moment))
            .execute()
        )
        return updated == 1

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
            self.outbox.mkdir(parents=True, exist_ok=True)
            name = f"{row.created_at.strftime('%Y%m%dT%H%M%S%f')}-{row.id:010d}.eml"
            temp = self.outbox / f".{name}.tmp"
            temp.write_bytes(bytes(message))
            temp.replace(self.outbox / name)
            return
        url = urlparse(self.smtp_url)
        with smtplib.SMTP(url.hostname or "localhost", url.port or 25, timeout=10) as smtp:
            if url.username:
                smtp.login(unquote(url.username), unquote(url.password or ""))
            smtp.send_message(message)

    def deliver(self, row_id: int) -> bool:
        """Try to deliver one queued message now; True when it went out."""
        if not self._claim(row_id):
            return False
        row = self.model.get_by_id(row_id)
        try:
            self._send(row)
        except (OSError, smtplib.SMTPException) as exc:
            attempts = row.attempts + 1
            delay = min(MAX_BACKOFF, timedelta(seconds=5 * 2 ** min(attempts, 10)))
            self.model.update(
                status="queued",
                attempts=attempts,
                next_attempt_at=clock.now() + delay,
                lease_until=None,
                last_error=f"{type(exc).__name__}: {exc}"[:500],
            ).where(self.model.id == row_id).execute()
            log.warning("mail %s to %s not delivered (attempt %s): %s", row_id, row.to_address, attempts, exc)
            return False
        self.model.update(
            status="sent", sent_at=clock.now(), attempts=row.attempts + 1, lease_until=None
        ).where(self.model.id == row_id).execute()
        return True

    def deliver_due(self, limit: int = 50) -> int:
        """Deliver every message whose time has come; returns how many went out."""
        m = self.model
        moment = clock.now()
        due = (
            m.select(m.id)
            .where(
                ((m.status == "queued") | ((m.status == "sending") & (m.lease_until < moment)))
                & (m.next_attempt_at <= moment)
            )
            .order_by(m.id)
            .limit(limit)
        )
        return sum(1 for row in list(due) if self.deliver(row.id))

    def worker(self, stop: threading.Event, interval: float = 2.0) -> None:
        """Background retry loop for `appliance serve`."""
        while not stop.wait(interval):
            try:
                with self.database.connection_context():
                    self.deliver_due()
            except Exception:  # keep the loop alive; the rows stay queued
                log.exception("mail worker pass failed")
