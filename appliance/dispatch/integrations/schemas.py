"""Shapes of integration keys and webhook endpoints (docs/integrations.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema
from appliance.dispatch.orders.schemas import ProofKind, ProofKinds

KEY_PROOF = (
    "beyond the specification (issue 47): the proof the orders this key creates need when they "
    "name none; null: the company's setting (PATCH /company/order-settings)"
)

OrderEvent = Literal[
    "order.created",
    "order.assigned",
    "order.picked_up",
    "order.delivered",
    "order.failed",
    "order.cancelled",
]
KeyName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
WebhookUrl = Annotated[str, StringConstraints(pattern=r"^https://\S{1,2030}$", max_length=2040)]


class KeyCreate(Schema):
    name: KeyName = Field(description="what the key is for, e.g. the shop's name")
    proofRequired: ProofKinds | None = Field(default=None, description=KEY_PROOF)


class KeyPatch(Schema):
    proofRequired: ProofKinds | None = Field(description=KEY_PROOF)


class KeyOut(BaseModel):
    id: str
    name: str
    createdAt: str
    proofRequired: list[ProofKind] | None = Field(default=None, description=KEY_PROOF)


class KeyCreated(KeyOut):
    key: str = Field(description="the key (ik_…), sent as `Authorization: Bearer`: shown only here")


class KeyList(BaseModel):
    keys: list[KeyOut] = Field(description="the company's unrevoked keys, oldest first (never the key)")


class WebhookCreate(Schema):
    url: WebhookUrl = Field(description="https URL of the receiver; public addresses only")
    events: list[OrderEvent] = Field(min_length=1, max_length=6, description="the order events to send")


class WebhookOut(BaseModel):
    id: str
    url: str
    events: list[OrderEvent]
    createdAt: str
    failingSince: str | None = Field(description="since when deliveries fail (null after a success)")
    lastError: str | None = Field(description="the last failed attempt's error")


class WebhookCreated(WebhookOut):
    secret: str = Field(description="the signing secret (whsec_…, Standard Webhooks): shown only here")


class WebhookList(BaseModel):
    webhooks: list[WebhookOut]


class DeliveryOut(BaseModel):
    id: str
    messageId: str = Field(description="the `webhook-id` of every attempt (msg_…)")
    eventType: OrderEvent
    status: Literal["queued", "delivered", "failed"] = Field(
        description="queued (waiting or retrying), delivered, or failed (given up)"
    )
    attempts: int = Field(description="attempts made so far")
    lastError: str | None = Field(description="the last failed attempt's error")
    createdAt: str
    nextAttemptAt: str | None = Field(description="when a queued delivery is tried next")
    deliveredAt: str | None


class DeliveryList(BaseModel):
    deliveries: list[DeliveryOut] = Field(description="the endpoint's newest 100 deliveries, newest first")
