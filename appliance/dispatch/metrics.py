"""The dispatch service's gauges for GET /metrics: the mail, recipient-message, fiscal-receipt and
order-webhook queues, the single-holder leases (housekeeping, each SMPP provider's sender, backups) and
the scheduled backups' last run and drill (appliance/backups/history.py)."""

from __future__ import annotations

from appliance.backups.history import backup_gauges
from appliance.common.metrics import DatabaseCollector, Lease, Queue
from appliance.dispatch.db import database
from appliance.dispatch.models import FiscalReceipt, JobLease, OutgoingMail, RecipientMessage, WebhookDelivery


def collector() -> DatabaseCollector:
    return DatabaseCollector(
        database,
        queues=[
            Queue("mail", OutgoingMail, lambda: OutgoingMail.status == "queued"),
            Queue("recipient_messages", RecipientMessage, lambda: RecipientMessage.status == "queued"),
            # Receipts waiting to be printed (a person's decision is not a queue: needs attention).
            Queue("fiscal_receipts", FiscalReceipt, lambda: FiscalReceipt.status == "queued"),
            Queue("order_webhooks", WebhookDelivery, lambda: WebhookDelivery.status == "queued"),
        ],
        leases=[Lease("job", JobLease, "name")],
        extra=[backup_gauges],
    )
