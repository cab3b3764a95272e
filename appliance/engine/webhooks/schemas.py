"""Webhook subscription shapes (the spec leaves POST's answer and the types field open)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import Schema

EventType = Literal["deposit.confirmed", "deposit.retracted", "payout.completed", "payout.failed"]
UrlStr = Annotated[str, StringConstraints(pattern=r"^https://\S{1,2040}$")]


class SubscribeRequest(Schema):
    endpointUrl: UrlStr = Field(description="https URL of the receiver; public addresses only")
    eventTypes: list[EventType] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="the event types to deliver; every type when absent",
    )


class Subscription(BaseModel):
    subscriptionId: str
    eventType: EventType
    endpointUrl: str
    createdAt: str


class Subscribed(BaseModel):
    operatorId: str
    endpointUrl: str
    secret: str | None = Field(
        description="the endpoint's signing secret: shown once, when the endpoint is first subscribed; "
        "null when it already existed (re-activated and given the listed types)"
    )
    subscriptions: list[Subscription]


class Subscriptions(BaseModel):
    operatorId: str
    subscriptions: list[Subscription] = Field(description="the caller's active subscriptions")
