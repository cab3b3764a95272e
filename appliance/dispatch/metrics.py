"""The dispatch service's gauges for GET /metrics: the mail and recipient-message queues and
the single-holder leases (housekeeping, each SMPP provider's sender)."""

from __future__ import annotations

from appliance.common.metrics import DatabaseCollector, Lease, Queue
from appliance.dispatch.db import database
from appliance.dispatch.models import JobLease, OutgoingMail, RecipientMessage


def collector() -> DatabaseCollector:
    return DatabaseCollector(
        database,
        queues=[
            Queue("mail", OutgoingMail, lambda: OutgoingMail.status == "queued"),
            Queue("recipient_messages", RecipientMessage, lambda: RecipientMessage.status == "queued"),
        ],
        leases=[Lease("job", JobLease, "name")],
    )
