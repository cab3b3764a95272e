"""The worker that prints fiscal receipts: rows of the outbox (fiscal_receipt) claimed with a lease
(common/jobs.LeasedQueue), each printed at most once.

Per receipt: ``checkConnection`` first (anything failing until here printed nothing: tried again
with back-off, given up after MAX_ATTEMPTS), then the request is stored with the row's status
``sending`` in its own committed transaction, and only then is ``print`` (or
``printReturnReceipt``) sent. The manual's calls carry no sequence number of ours and ``printCopy``
needs the receiptId the lost answer held, so a print whose answer never came (a timeout, the
connection dropped, a process killed mid-call: its row is found ``sending`` when claimed again) is
``unknown``: the order is flagged for a person, who looks the receipt up (printCopy with its id)
or says it was not printed. Nothing is ever printed twice by the worker itself. A refusal by the
service (a non-zero code) printed nothing: the receipt is ``failed`` and flagged likewise."""

from __future__ import annotations

import json
import logging
import threading
from datetime import timedelta
from decimal import Decimal

from e_hdm import EHDMAPIError

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.jobs import LeasedQueue, run_worker
from appliance.dispatch.db import database
from appliance.dispatch.fiscal import service
from appliance.dispatch.fiscal.client import NotSent, OutcomeUnknown, ehdm_client
from appliance.dispatch.models import FiscalReceipt, FiscalSettings, Order
from appliance.dispatch.orders.state import audit

log = logging.getLogger("appliance.fiscal")

LEASE = timedelta(minutes=2)  # longer than a call's timeout (fiscal/service.TIMEOUT_SECONDS)
MAX_ATTEMPTS = 12  # 10 s, 20 s … capped at 30 minutes: about 3 hours of trying


class ReceiptSender:
    def __init__(
        self, master_key: bytes, *, allow_private: bool, timeout: float = service.TIMEOUT_SECONDS
    ) -> None:
        self.master_key = master_key
        self.allow_private = allow_private
        self.timeout = timeout
        self.queue = LeasedQueue(
            FiscalReceipt,
            database,
            pending=lambda: FiscalReceipt.status.in_(("queued", "sending")),
            lease=LEASE,
            error_field="last_error",
            backoff_base=5.0,
        )

    def run_pass(self) -> int:
        handled = 0
        for row_id in self.queue.claim(20):
            handled += self.print_one(row_id)
        return handled

    def worker(self, stop: threading.Event, interval: float = 2.0) -> None:
        run_worker("fiscal-receipts", database, stop, self.run_pass, idle_seconds=interval)

    def print_one(self, row_id: int) -> int:
        row = FiscalReceipt.get_by_id(row_id)
        if row.status == "sending":  # claimed again mid-call: the process stopped before the answer
            self._unknown(row, "the print's outcome was lost (the process stopped during the call)")
            return 1
        settings = FiscalSettings.get_or_none(FiscalSettings.company == row.company_id)
        order = Order.get_by_id(row.order_id)
        if settings is None or not settings.enabled:
            self._failed(row, "e-HDM is not set up for the company")
            return 1
        try:
            with service.connection_of(
                self.master_key, settings, allow_private=self.allow_private, timeout=self.timeout
            ) as connection:
                client = ehdm_client(settings.crn, settings.base_url, connection)
                client.check_connection()
                if row.kind == "sale":
                    request = service.receipt_request(order, settings, row.cash_amd)
                else:
                    sale = FiscalReceipt.get(
                        (FiscalReceipt.order == row.order_id) & (FiscalReceipt.kind == "sale")
                    )
                    source_crn = sale.crn or settings.crn  # the register that printed the sale
                    info = client.get_returned_receipt_info(sale.receipt_id, source_crn)
                    request = info.build_full_return(
                        card_amount=Decimal(0), cash_amount=Decimal(row.cash_amd)
                    )
                    request.receipt_id = sale.receipt_id
                    request.source_crn = source_crn
                if not self._mark_sending(row, request.to_payload()):
                    return 0  # the lease was lost meanwhile: another process has the row
                connection.commit()
                if row.kind == "sale":
                    result = client.print_receipt(request)  # type: ignore[arg-type]
                else:
                    result = client.print_return_receipt(request)  # type: ignore[arg-type]
        except service.LinesMismatch as exc:
            self._failed(row, str(exc))
            return 1
        except NotSent as exc:
            self._not_sent(row, str(exc))
            return 1
        except OutcomeUnknown as exc:
            self._unknown(row, str(exc))
            return 1
        except EHDMAPIError as exc:
            self._failed(row, f"e-HDM refused the receipt: {exc}")
            return 1
        with write_transaction(database):
            service.record_printed(row.id, result.receipt_id, result.crn, result.fiscal, result.qr)
        log.info(
            "fiscal receipt %s (%s) of order %s printed: %s",
            row.id,
            row.kind,
            row.order_id,
            result.receipt_id,
        )
        return 1

    # -- outcomes ---------------------------------------------------------------------------------

    def _mark_sending(self, row: FiscalReceipt, payload: dict) -> bool:
        """The request and the call's start, committed before the call (a crash after it leaves
        ``sending`` behind, never a second print)."""
        with write_transaction(database):
            updated = (
                FiscalReceipt.update(
                    status="sending",
                    request=json.dumps(payload, ensure_ascii=False, default=str),
                    call_started_at=clock.now(),
                    attempts=FiscalReceipt.attempts + 1,
                )
                .where((FiscalReceipt.id == row.id) & (FiscalReceipt.status == "queued"))
                .execute()
            )
        return updated == 1

    def _not_sent(self, row: FiscalReceipt, error: str) -> None:
        if row.attempts + 1 >= MAX_ATTEMPTS:
            self._failed(row, error)
            return
        # Refused before the print was read (our certificate, at the print's own connection):
        # nothing was printed, so the row is queued again rather than left "sending".
        FiscalReceipt.update(status="queued").where(
            (FiscalReceipt.id == row.id) & (FiscalReceipt.status == "sending")
        ).execute()
        self.queue.retry_later(row.id, error)

    def _decision_needed(self, row: FiscalReceipt, status: str, error: str, reason: str) -> None:
        with write_transaction(database):
            FiscalReceipt.update(
                status=status, last_error=error[:500], lease_until=None, lease_holder=None
            ).where(FiscalReceipt.id == row.id).execute()
            order = Order.get_by_id(row.order_id)
            service.flag(order, reason)
            audit(order, f"fiscal_{status}", None, receiptKind=row.kind, error=error[:200])
        log.warning("fiscal receipt %s of order %s %s: %s", row.id, row.order_id, status, error)

    def _unknown(self, row: FiscalReceipt, error: str) -> None:
        self._decision_needed(
            row,
            "unknown",
            error,
            "The fiscal receipt may have been printed (no answer came): find it on e-HDM and record it, "
            "or say it was not printed.",
        )

    def _failed(self, row: FiscalReceipt, error: str) -> None:
        self._decision_needed(row, "failed", error, f"The fiscal receipt was not printed: {error}"[:500])
