"""The dispatch service's gauges for GET /metrics: the mail and order-webhook queues and the
housekeeping lease."""

from __future__ import annotations

from appliance.common.metrics import DatabaseCollector, Lease, Queue
from appliance.dispatch.db import database
from appliance.dispatch.models import JobLease, OutgoingMail, WebhookDelivery


def collector() -> DatabaseCollector:
    return DatabaseCollector(
        database,
        queues=[
            Queue("mail", OutgoingMail, lambda: OutgoingMail.status == "queued"),
            Queue("order_webhooks", WebhookDelivery, lambda: WebhookDelivery.status == "queued"),
        ],
        leases=[Lease("job", JobLease, "name")],
    )
