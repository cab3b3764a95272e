"""The worker that sends recipient messages: rows claimed with a lease (common/jobs.LeasedQueue,
like the mail worker), SMS through one bound SMPP session per provider at a time (a JobLease
``smpp:<company>`` so that the provider's throughput limit holds across processes), e-mail handed
to the appliance's mail outbox. A failure counts an attempt and backs off; after MAX_ATTEMPTS the
message is failed. Delivery receipts (deliver_sm) update the message and the order's history.

The worker also watches the arrival estimates: a picked-up order whose courier is due within the
company's ``arriving_minutes`` gets its "arriving" message, and one whose estimate passes the end
of its delivery window its "late" notice (each once per attempt)."""

from __future__ import annotations

import functools
import json
import logging
import math
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

import smpplib.exceptions

from appliance.common import clock, faults
from appliance.common.db import write_transaction
from appliance.common.holders import process_holder
from appliance.common.jobs import LeasedQueue, run_worker
from appliance.common.lease import SingletonLease
from appliance.common.mail import Mailer, redact_links
from appliance.dispatch.db import database
from appliance.dispatch.eta.service import courier_eta
from appliance.dispatch.messages import outbox
from appliance.dispatch.messages.secrets import unseal
from appliance.dispatch.messages.service import recipient_link, settings_of, text_of
from appliance.dispatch.messages.smpp import Provider, SessionFailed, SmppError, SmppSession
from appliance.dispatch.messages.texts import sms_shape
from appliance.dispatch.models import Company, Courier, JobLease, Order, RecipientMessage, RecipientSettings
from appliance.dispatch.orders.state import FINAL, audit
from appliance.dispatch.routing.engines import Router
from appliance.dispatch.routing.memo import RouteMemo
from appliance.settings import Settings

log = logging.getLogger("appliance.messages")

LEASE = timedelta(minutes=2)
MAX_ATTEMPTS = 12  # 10 s, 20 s … capped at 30 minutes: about 3 hours of trying
RECEIPT_WINDOW = timedelta(days=2)  # a receipt later than this is not waited for
SUBJECTS = {
    "assigned": {"hy": "Ձեր պատվերը", "ru": "Ваш заказ", "en": "Your order"},
    "picked_up": {"hy": "Պատվերը ճանապարհին է", "ru": "Заказ в пути", "en": "Your order is on its way"},
    "arriving": {"hy": "Առաքիչը մոտենում է", "ru": "Курьер подъезжает", "en": "The courier is arriving"},
    "delivered": {"hy": "Պատվերն առաքված է", "ru": "Заказ доставлен", "en": "Your order was delivered"},
    "failed": {"hy": "Առաքումը չհաջողվեց", "ru": "Доставка не удалась", "en": "Delivery failed"},
    "late": {"hy": "Պատվերը կուշանա", "ru": "Заказ задерживается", "en": "Your order is running late"},
}


def provider_of(master_key: bytes, settings: RecipientSettings) -> Provider:
    return Provider(
        host=settings.smpp_host,
        port=settings.smpp_port,
        system_id=settings.smpp_system_id,
        password=unseal(master_key, settings.company_id, settings.smpp_password_cipher),
        source_addr=settings.smpp_source_addr,
        tls=bool(settings.smpp_tls),
        per_second=settings.smpp_per_second or 10,
    )


class RecipientSender:
    def __init__(
        self,
        app_settings: Settings,
        master_key: bytes,
        mailer: Mailer,
        router: Router | RouteMemo | None = None,
        *,
        listen_seconds: float = 1.0,
        receipt_poll_seconds: float = 60.0,
        estimate_every_seconds: float = 30.0,
        timeout: float = 10.0,
        ca_file: str = "",
    ) -> None:
        self.app_settings = app_settings
        self.master_key = master_key
        self.mailer = mailer
        self.router = router
        self.listen_seconds = listen_seconds
        self.receipt_poll_seconds = receipt_poll_seconds
        self.estimate_every_seconds = estimate_every_seconds
        self.timeout = timeout
        self.ca_file = ca_file  # a private certificate authority for providers' TLS, beside the system's
        self._last_listen: dict[int, float] = {}
        self._last_estimate = -math.inf
        self.queue = LeasedQueue(
            RecipientMessage,
            database,
            pending=lambda: RecipientMessage.status == "queued",
            lease=LEASE,
            error_field="last_error",
            backoff_base=5.0,
        )

    # -- one pass ---------------------------------------------------------------------------------

    def run_pass(self) -> int:
        """Queue what the estimates call for, send what is due, read the receipts awaited."""
        try:
            handled = self.watch_estimates()
        except Exception as exc:  # a road engine's failure must not hold up the messages queued
            faults.log_failure(log, exc, "arrival estimates for recipient messages")
            handled = 0
        ids = self.queue.claim(100)
        by_company: dict[int, list[int]] = defaultdict(list)
        for row in (
            RecipientMessage.select().where(RecipientMessage.id.in_(ids)).order_by(RecipientMessage.id)
        ):
            if self._outdated(row):
                self._skip(row.id)
                handled += 1
            elif row.channel == "email":
                handled += self._hand_to_mail(row.id)
            else:
                by_company[row.company_id].append(row.id)
        for company_id, row_ids in by_company.items():
            handled += self._send_sms(company_id, row_ids)
        handled += self._poll_receipts(exclude=set(by_company))
        return handled

    def worker(self, stop: threading.Event, interval: float = 2.0) -> None:
        run_worker("recipient-messages", database, stop, self.run_pass, idle_seconds=interval)

    # -- texts ------------------------------------------------------------------------------------

    def _outdated(self, row: RecipientMessage) -> bool:
        """A message the order has overtaken while it waited (a provider down for an hour): news of
        an earlier attempt, of a cancelled order, or "on its way"/"arriving"/"late" once the order
        is delivered or failed. It would only confuse the recipient."""
        order = Order.get_by_id(row.order_id)
        if order.attempt != row.attempt or order.status == "cancelled":
            return True
        return order.status in FINAL and row.event in ("assigned", "picked_up", "arriving", "late")

    def _render(self, row_id: int) -> tuple[RecipientMessage, str]:
        """The row and its text, the link issued or reused in this transaction; the row keeps the
        text without the link's token."""
        with write_transaction(database):
            row = RecipientMessage.get_by_id(row_id)
            order = Order.get_by_id(row.order_id)
            settings = settings_of(row.company_id)
            company = Company.get_by_id(row.company_id)
            link = recipient_link(self.app_settings, self.master_key, order)
            minutes = json.loads(row.data or "{}").get("minutes")
            text = text_of(settings, company, order, row.event, row.language, link, minutes)
            segments = int(sms_shape(text)["segments"]) if row.channel == "sms" else None  # type: ignore[call-overload]
            RecipientMessage.update(body=redact_links(text), segments=segments).where(
                RecipientMessage.id == row_id
            ).execute()
        return row, text

    # -- e-mail -----------------------------------------------------------------------------------

    def _hand_to_mail(self, row_id: int) -> int:
        row, text = self._render(row_id)
        company = Company.get_by_id(row.company_id)
        subject = f"{company.name}: {SUBJECTS[row.event][row.language]}"
        with write_transaction(database):
            self.mailer.enqueue(row.to_address, subject, text)
            self._mark_sent(row, provider_id=None)
        return 1

    # -- SMS --------------------------------------------------------------------------------------

    @staticmethod
    def _provider_lease(company_id: int) -> SingletonLease:
        """One process at a time binds to a company's SMS provider (held by the process: its
        sessions follow one another)."""
        return SingletonLease.of(JobLease, f"smpp:{company_id}", duration=LEASE, holder=process_holder())

    def _take_provider(self, company_id: int) -> bool:
        return self._provider_lease(company_id).take()

    def _renew(self, company_id: int, row_ids: list[int]) -> None:
        until = clock.now() + LEASE
        self._provider_lease(company_id).renew()
        RecipientMessage.update(lease_until=until).where(RecipientMessage.id.in_(row_ids)).execute()

    def _free_provider(self, company_id: int) -> None:
        self._provider_lease(company_id).release()

    def _send_sms(self, company_id: int, row_ids: list[int]) -> int:
        settings = RecipientSettings.get_or_none(RecipientSettings.company == company_id)
        if settings is None or not settings.sms_enabled or not settings.smpp_host:
            for row_id in row_ids:
                self._give_up(row_id, "SMS is not set up for the company")
            return len(row_ids)
        if not self._take_provider(company_id):
            for row_id in row_ids:  # another process is sending for this provider: later
                self.queue.release(row_id, after=timedelta(seconds=5))
            return 0
        sent = 0
        pending = list(row_ids)
        renewed = time.monotonic()
        sent_ids: set[int] = set()
        receipts: list[int] = []  # the rows whose receipt this session read
        try:
            with SmppSession(
                provider_of(self.master_key, settings),
                self._receipt(company_id, receipts),
                timeout=self.timeout,
                ca_file=self.ca_file,
                allow_private=self.app_settings.smpp_allow_private,
            ) as session:
                while pending:
                    if time.monotonic() - renewed > LEASE.total_seconds() / 4:
                        # A long batch at a low rate: keep the rows and the provider ours.
                        self._renew(company_id, pending)
                        renewed = time.monotonic()
                    row, text = self._render(pending[0])
                    try:
                        message_id = session.submit(row.to_address, text)
                    except smpplib.exceptions.PDUError as exc:
                        # The provider refused this message (a bad number, throttling): it alone
                        # waits and tries again; the session and the others go on.
                        self._failed_attempt(pending.pop(0), f"refused by the provider: {exc}")
                        continue
                    pending.pop(0)
                    self._mark_sent(row, provider_id=message_id)
                    sent_ids.add(row.id)
                    sent += 1
                # Until the receipts of what this session sent are in (a later bind reads the rest).
                session.listen(self.listen_seconds, done=lambda: sent_ids <= set(receipts))
                self._last_listen[company_id] = time.monotonic()
        except SmppError as exc:
            # A session that could not be opened has one text, whatever the cause (smpp.py).
            error = str(exc) if isinstance(exc, SessionFailed) else f"{type(exc).__name__}: {exc}"
            for row_id in pending:
                self._failed_attempt(row_id, error)
        finally:
            self._free_provider(company_id)
        return sent + len(pending)

    def _poll_receipts(self, exclude: set[int]) -> int:
        """Bind to each provider that owes receipts, at most every receipt_poll_seconds, and read
        what it has kept for us."""
        since = clock.now() - RECEIPT_WINDOW
        owing = (
            RecipientMessage.select(RecipientMessage.company)
            .where(
                (RecipientMessage.status == "sent")
                & (RecipientMessage.channel == "sms")
                & (RecipientMessage.sent_at > since)
            )
            .distinct()
        )
        received = 0
        for (company_id,) in owing.tuples():
            if company_id in exclude:
                continue
            if time.monotonic() - self._last_listen.get(company_id, -math.inf) < self.receipt_poll_seconds:
                continue
            settings = RecipientSettings.get_or_none(RecipientSettings.company == company_id)
            if settings is None or not settings.sms_enabled or not self._take_provider(company_id):
                continue
            self._last_listen[company_id] = time.monotonic()
            counted: list[int] = []
            owed = (
                RecipientMessage.select()
                .where(
                    (RecipientMessage.company == company_id)
                    & (RecipientMessage.status == "sent")
                    & (RecipientMessage.channel == "sms")
                    & (RecipientMessage.sent_at > since)
                )
                .count()
            )
            try:
                callback = self._receipt(company_id, counted)
                with SmppSession(
                    provider_of(self.master_key, settings),
                    callback,
                    timeout=self.timeout,
                    ca_file=self.ca_file,
                    allow_private=self.app_settings.smpp_allow_private,
                ) as session:
                    session.listen(self.listen_seconds, done=functools.partial(_all_in, counted, owed))
            except SmppError as exc:
                log.warning("receipts from the SMPP provider of company %s: %s", company_id, exc)
            finally:
                self._free_provider(company_id)
            received += len(counted)
        return received

    def _receipt(self, company_id: int, counted: list[int] | None = None) -> Any:
        def handle(provider_id: str, state: str) -> None:
            with write_transaction(database):
                row = RecipientMessage.get_or_none(
                    (RecipientMessage.company == company_id)
                    & (RecipientMessage.provider_message_id == provider_id)
                    & (RecipientMessage.status == "sent")
                )
                if row is None:
                    return
                RecipientMessage.update(status=state, receipt_at=clock.now()).where(
                    RecipientMessage.id == row.id
                ).execute()
                self._history(row, f"message_{state}")
            if counted is not None:
                counted.append(row.id)

        return handle

    # -- outcomes ---------------------------------------------------------------------------------

    def _history(self, row: RecipientMessage, kind: str, **extra: Any) -> None:
        """The order's history names every message's fate (orders' GET /events)."""
        order = Order.get_by_id(row.order_id)
        audit(order, kind, None, messageId=str(row.id), channel=row.channel, event=row.event, **extra)

    def _mark_sent(self, row: RecipientMessage, *, provider_id: str | None) -> None:
        with write_transaction(database):
            fresh = RecipientMessage.get_by_id(row.id)
            RecipientMessage.update(
                status="sent",
                sent_at=clock.now(),
                attempts=fresh.attempts + 1,
                lease_until=None,
                lease_holder=None,
                last_error=None,
                provider_message_id=provider_id,
            ).where(RecipientMessage.id == row.id).execute()
            self._history(fresh, "message_sent", segments=fresh.segments)

    def _failed_attempt(self, row_id: int, error: str) -> None:
        row = RecipientMessage.get_by_id(row_id)
        if row.attempts + 1 >= MAX_ATTEMPTS:
            self._give_up(row_id, error)
            return
        self.queue.retry_later(row_id, error)
        if row.attempts == 0:
            # Issue 46: a provider out of reach was invisible while the message waited to be
            # retried (hours). The first failure goes into the order's history with the
            # provider's error; the give-up does too (message_failed); the attempts between do not.
            with write_transaction(database):
                self._history(row, "message_retrying", error=error[:200])

    def _skip(self, row_id: int) -> None:
        with write_transaction(database):
            row = RecipientMessage.get_by_id(row_id)
            RecipientMessage.update(
                status="skipped", lease_until=None, lease_holder=None, last_error="outdated by the order"
            ).where(RecipientMessage.id == row_id).execute()
            self._history(row, "message_skipped")

    def _give_up(self, row_id: int, error: str) -> None:
        with write_transaction(database):
            row = RecipientMessage.get_by_id(row_id)
            RecipientMessage.update(
                status="failed",
                attempts=row.attempts + 1,
                lease_until=None,
                lease_holder=None,
                last_error=error[:500],
            ).where(RecipientMessage.id == row_id).execute()
            self._history(row, "message_failed", error=error[:200])
        log.warning("recipient message %s given up: %s", row_id, error)

    # -- arrival estimates ------------------------------------------------------------------------

    def watch_estimates(self) -> int:
        """Queue "arriving" and automatic "late" messages from the couriers' arrival estimates."""
        if self.router is None or time.monotonic() - self._last_estimate < self.estimate_every_seconds:
            return 0
        self._last_estimate = time.monotonic()
        queued = 0
        watching = RecipientSettings.select().where(
            RecipientSettings.events.contains('"arriving"') | RecipientSettings.events.contains('"late"')
        )
        for settings in watching:
            events = outbox.enabled_events(settings)
            couriers = (
                Order.select(Order.courier)
                .where(
                    (Order.company == settings.company_id)
                    & Order.status.in_(("assigned", "picked_up"))
                    & Order.courier.is_null(False)
                )
                .distinct()
            )
            for (courier_id,) in couriers.tuples():
                queued += self._watch_courier(settings, events, Courier.get_by_id(courier_id))
        return queued

    def _watch_courier(self, settings: RecipientSettings, events: set[str], courier: Courier) -> int:
        assert self.router is not None
        eta = courier_eta(
            self.router, courier, max_fix_age=timedelta(minutes=self.app_settings.eta_max_fix_minutes)
        )
        now = clock.now()
        queued = 0
        for stop in eta["stops"]:
            if stop["expectedAt"] is None:
                continue
            # The expected hand-over, not the road estimate: a courier waiting for an earlier stop's
            # window is not "arriving" at the next one (issue 46, eta/service.py expected_sequence).
            expected = datetime.fromisoformat(stop["expectedAt"])
            seconds = max(0, round((expected - now).total_seconds()))
            minutes = max(1, math.ceil(seconds / 60))
            with write_transaction(database):
                order = Order.get_or_none(Order.id == int(stop["orderId"]))
                if order is None or order.status not in ("assigned", "picked_up"):
                    continue
                if (
                    "arriving" in events
                    and order.status == "picked_up"
                    and seconds <= (settings.arriving_minutes or 10) * 60
                ):
                    queued += len(outbox.queue(order, "arriving", settings, data={"minutes": minutes}))
                if "late" in events and order.window_end is not None:
                    overrun = expected - order.window_end
                    if overrun > timedelta(0):
                        late = max(1, math.ceil(overrun.total_seconds() / 60))
                        queued += len(outbox.queue(order, "late", settings, data={"minutes": late}))
        return queued


def _all_in(counted: list[int], owed: int) -> bool:
    """Every receipt owed has been read: the session need not listen on."""
    return len(counted) >= owed
