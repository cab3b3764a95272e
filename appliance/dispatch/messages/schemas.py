"""Shapes of recipient-message settings, an order's messages and the send of a late notice."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema

Event = Literal["assigned", "picked_up", "arriving", "delivered", "failed", "late"]
Language = Literal["hy", "ru", "en"]
Template = Annotated[str, StringConstraints(min_length=1, max_length=480)]
Host = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255, pattern=r"^[^\s/]+$")
]
SystemId = Annotated[str, StringConstraints(min_length=1, max_length=15)]  # SMPP 3.4: C-Octet 16
Password = Annotated[str, StringConstraints(min_length=1, max_length=8)]  # SMPP 3.4: C-Octet 9
SourceAddr = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20), ONE_LINE]


class TemplatesByLanguage(Schema):
    hy: Template | None = None
    ru: Template | None = None
    en: Template | None = None


class Templates(Schema):
    assigned: TemplatesByLanguage | None = None
    picked_up: TemplatesByLanguage | None = None
    arriving: TemplatesByLanguage | None = None
    delivered: TemplatesByLanguage | None = None
    failed: TemplatesByLanguage | None = None
    late: TemplatesByLanguage | None = None


class MessageSettingsPatch(Schema):
    defaultLanguage: Language | None = None
    events: list[Event] | None = Field(default=None, max_length=6, description="the events that send")
    templates: Templates | None = Field(
        default=None,
        description="replaces the company's templates; a missing one uses the built-in text. "
        "Placeholders {company}, {order}, {link}, {minutes}",
    )
    smsEnabled: bool | None = None
    smppHost: Host | None = None
    smppPort: Annotated[int, Field(ge=1, le=65535)] | None = None
    smppSystemId: SystemId | None = None
    smppPassword: Password | None = Field(default=None, description="write-only; kept encrypted")
    smppSourceAddr: SourceAddr | None = Field(
        default=None, description="the sender: a name of up to 11 letters or an international number"
    )
    smppTls: bool | None = Field(
        default=None, description="TLS from the first byte, when the provider offers it"
    )
    smppPerSecond: Annotated[int, Field(ge=1, le=1000)] | None = Field(
        default=None, description="throughput limit: submit_sm per second to this provider"
    )
    emailEnabled: bool | None = None
    arrivingMinutes: Annotated[int, Field(ge=1, le=120)] | None = None


class MessageSettingsOut(BaseModel):
    defaultLanguage: Language
    events: list[Event]
    templates: dict[str, dict[str, str]]
    defaultTexts: dict[str, dict[str, str]]
    segments: dict[str, dict[str, int]] = Field(
        description="{event: {language: n}}: the SMS parts each text (the company's or the built-in) "
        "costs with {company}, {order}, {link} and {minutes} filled in as they will be"
    )
    smsEnabled: bool
    smppHost: str | None
    smppPort: int | None
    smppSystemId: str | None
    hasSmppPassword: bool
    smppSourceAddr: str | None
    smppTls: bool
    smppPerSecond: int
    emailEnabled: bool
    arrivingMinutes: int


class MessageSettingsEnvelope(BaseModel):
    settings: MessageSettingsOut


class MessageOut(BaseModel):
    id: str
    event: Event
    channel: Literal["sms", "email"]
    to: str
    language: Language
    status: Literal["queued", "sent", "delivered", "undelivered", "failed", "skipped"]
    segments: int | None
    attempts: int
    lastError: str | None
    failing: bool = Field(
        description="queued, and its last attempt failed (lastError holds the provider's error): it is "
        "retried; the order's history says so (message_retrying, then message_failed when given up)"
    )
    createdAt: str
    sentAt: str | None
    receiptAt: str | None


class MessageList(BaseModel):
    messages: list[MessageOut]


class LateNotice(Schema):
    delayMinutes: Annotated[int, Field(ge=1, le=600)] | None = Field(
        default=None, description="else from the arrival estimate, else 15"
    )


class LatePreview(BaseModel):
    text: str = Field(description="the text in the recipient's language, the link as it will be sent")
    language: Language
    encoding: Literal["gsm7", "ucs2"]
    segments: int
    channels: list[Literal["sms", "email"]] = Field(description="empty: nothing can be sent")
    delayMinutes: int


class LateSent(BaseModel):
    messages: list[MessageOut]
    preview: LatePreview
