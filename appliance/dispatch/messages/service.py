"""Recipient-message rules: the company's settings, an order's messages, the late notice a
dispatcher sends (previewed first, with its SMS segment count), and the text of a message."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.common.addresses import HostRefused, checked_addresses
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, Invalid, NotFound
from appliance.dispatch.db import database
from appliance.dispatch.messages import outbox
from appliance.dispatch.messages.secrets import seal, seal_token, unseal_token
from appliance.dispatch.messages.texts import (
    DEFAULT_TEXTS,
    EVENTS,
    LANGUAGES,
    render,
    sms_shape,
    template_for,
)
from appliance.dispatch.models import (
    Company,
    Order,
    RecipientLink,
    RecipientMessage,
    RecipientSettings,
    TrackingLink,
)
from appliance.dispatch.orders.state import audit, late_notice_allowed
from appliance.dispatch.runtime import DispatchRuntime
from appliance.dispatch.tracking import links
from appliance.settings import Settings

# A tracking token is secrets.token_urlsafe(24): 32 characters (the preview's stand-in).
TOKEN_LENGTH = 32
# A link the next message would carry must live at least this much longer.
LINK_MARGIN = timedelta(hours=1)


def settings_of(company_id: int) -> RecipientSettings:
    """The company's settings, the defaults (nothing sends) when never saved."""
    row = RecipientSettings.get_or_none(RecipientSettings.company == company_id)
    return row if row is not None else RecipientSettings(company=company_id)


def templates_of(settings: RecipientSettings) -> dict[str, dict[str, str]]:
    return json.loads(settings.templates or "{}")


def settings_body(row: RecipientSettings) -> dict[str, Any]:
    return {
        "defaultLanguage": row.default_language or "hy",
        "events": [e for e in EVENTS if e in outbox.enabled_events(row)],
        "templates": templates_of(row),
        "defaultTexts": DEFAULT_TEXTS,
        "smsEnabled": bool(row.sms_enabled),
        "smppHost": row.smpp_host,
        "smppPort": row.smpp_port,
        "smppSystemId": row.smpp_system_id,
        "hasSmppPassword": row.smpp_password_cipher is not None,
        "smppSourceAddr": row.smpp_source_addr,
        "smppTls": bool(row.smpp_tls),
        "smppPerSecond": row.smpp_per_second or 10,
        "emailEnabled": bool(row.email_enabled),
        "arrivingMinutes": row.arriving_minutes or 10,
    }


def get_settings(company_id: int) -> dict[str, Any]:
    return settings_body(settings_of(company_id))


# What a real message holds where a template has a placeholder, for counting its SMS parts: an
# order number (new_public_id: ten letters and digits), a link with a token (token_urlsafe(24):
# 32 characters) and the language, two-digit minutes.
SAMPLE_ORDER = "A" * 10
SAMPLE_TOKEN = "x" * 32


def with_segments(body: dict[str, Any], company_id: int, public_url: str) -> dict[str, Any]:
    """``body`` (the settings) with ``segments {event: {language: n}}``: the SMS parts each text
    costs once {company}, {order}, {link} and {minutes} are filled in as they will be (issue 46:
    the count ignored the expansion, and the Armenian "failed" text, 3 parts, was shown as 2)."""
    company = Company.get_by_id(company_id)
    counts: dict[str, dict[str, int]] = {}
    for event in EVENTS:
        minutes = body["arrivingMinutes"] if event == "arriving" else 15
        for language in LANGUAGES:
            text = render(
                template_for(body["templates"], event, language),
                company=company.name,
                link=f"{public_url}/t/{SAMPLE_TOKEN}?lang={language}",
                order=SAMPLE_ORDER,
                minutes=minutes,
            )
            counts.setdefault(event, {})[language] = int(sms_shape(text)["segments"])  # type: ignore[call-overload]
    return {**body, "segments": counts}


_COLUMNS = {
    "defaultLanguage": "default_language",
    "smsEnabled": "sms_enabled",
    "smppHost": "smpp_host",
    "smppPort": "smpp_port",
    "smppSystemId": "smpp_system_id",
    "smppSourceAddr": "smpp_source_addr",
    "smppTls": "smpp_tls",
    "smppPerSecond": "smpp_per_second",
    "emailEnabled": "email_enabled",
    "arrivingMinutes": "arriving_minutes",
}
_SMS_NEEDS = {
    "smppHost": "smpp_host",
    "smppPort": "smpp_port",
    "smppSystemId": "smpp_system_id",
    "smppPassword": "smpp_password_cipher",
    "smppSourceAddr": "smpp_source_addr",
}


SMPP_PORT = 2775  # SMPP's registered port: only fills the resolver's question when none is given


def _host_refused(changes: dict[str, Any], allow_private: bool) -> bool:
    """Whether the patch names an SMPP host that may not be reached: unresolvable, or resolving
    to a loopback, private or other special address (the webhooks' rules, appliance/common/
    addresses.py) while the deployment does not allow them. Checked again at every connection."""
    host = changes.get("smppHost")
    if host is None:
        return False
    try:
        checked_addresses(host, changes.get("smppPort") or SMPP_PORT, allow_private)
    except HostRefused:
        return True
    return False


def update_settings(
    master_key: bytes, company_id: int, changes: dict[str, Any], *, allow_private: bool = False
) -> dict[str, Any]:
    """Apply a validated patch; SMS can be on only with a whole provider, and with a host that
    may be reached (422 otherwise, the missing fields first)."""
    refused = _host_refused(changes, allow_private)  # the resolver, before any lock is taken
    with write_transaction(database):
        row = RecipientSettings.get_or_none(RecipientSettings.company == company_id)
        new = row is None
        if row is None:
            row = RecipientSettings(company=company_id)
        for field, column in _COLUMNS.items():
            if field in changes and changes[field] is not None:
                setattr(row, column, changes[field])
        if changes.get("events") is not None:
            row.events = json.dumps(sorted(set(changes["events"]), key=EVENTS.index))
        if changes.get("templates") is not None:
            templates = {
                event: {lang: text for lang, text in (by_lang or {}).items() if text}
                for event, by_lang in changes["templates"].items()
                if by_lang
            }
            row.templates = json.dumps({e: t for e, t in templates.items() if t}, ensure_ascii=False)
        if changes.get("smppPassword"):
            row.smpp_password_cipher = seal(master_key, company_id, changes["smppPassword"])
        if row.sms_enabled:
            missing = [field for field, column in _SMS_NEEDS.items() if not getattr(row, column)]
            if missing:
                raise Invalid(
                    "SMS needs the provider's host, port, system id, password and source address.",
                    errors=[{"field": f, "message": "required while smsEnabled"} for f in missing],
                )
        if refused:
            raise Invalid(
                "The SMS provider's host is refused: it must resolve to public addresses only.",
                errors=[{"field": "smppHost", "message": "refused (unresolvable or non-public)"}],
            )
        row.updated_at = clock.now()  # type: ignore[assignment]
        row.save(force_insert=new)
    return settings_body(row)


# -- an order's messages -----------------------------------------------------------------------


def _own_order(company_id: int, order_id: int) -> Order:
    order = Order.get_or_none((Order.id == order_id) & (Order.company == company_id))
    if order is None:
        raise NotFound("No such order.")
    return order


def message_body(row: RecipientMessage) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "event": row.event,
        "channel": row.channel,
        "to": row.to_address,
        "language": row.language,
        "status": row.status,
        "segments": row.segments,
        "attempts": row.attempts,
        "lastError": row.last_error,
        # Queued but its last attempt failed (the provider's error in lastError): never "sent".
        "failing": row.status == "queued" and row.last_error is not None,
        "createdAt": clock.iso(row.created_at),
        "sentAt": clock.iso(row.sent_at),
        "receiptAt": clock.iso(row.receipt_at),
    }


def order_messages(company_id: int, order_id: int) -> list[dict[str, Any]]:
    _own_order(company_id, order_id)
    rows = RecipientMessage.select().where(
        (RecipientMessage.order == order_id) & (RecipientMessage.company == company_id)
    )
    return [message_body(r) for r in rows.order_by(RecipientMessage.id)]


# -- texts -------------------------------------------------------------------------------------


def text_of(
    settings: RecipientSettings,
    company: Company,
    order: Order,
    event: str,
    language: str,
    link: str,
    minutes: int | None,
) -> str:
    template = template_for(templates_of(settings), event, language)
    # The link opens the tracking page in the text's language (issue 46).
    localized = f"{link}?lang={language}" if link else link
    return render(template, company=company.name, link=localized, order=order.public_id, minutes=minutes)


def recipient_link(app_settings: Settings, master_key: bytes, order: Order) -> str:
    """The tracking link the order's messages carry: the one sent before while it lives, else a
    new one (call inside a write transaction). A new one does not revoke other links: a link the
    dispatcher gave by phone keeps working."""
    kept = RecipientLink.get_or_none(RecipientLink.order == order.id)
    if kept is not None:
        link = TrackingLink.get_or_none(TrackingLink.id == kept.link_id)
        if link is not None and links.is_live(link.revoked_at, link.expires_at, margin=LINK_MARGIN):
            return (
                app_settings.dispatch_public_url
                + "/t/"
                + unseal_token(master_key, order.id, kept.token_cipher)
            )
    issued = links.issue(
        master_key,
        app_settings.dispatch_public_url,
        order,
        app_settings.tracking_ttl_hours,
        revoke_others=False,
    )
    cipher = seal_token(master_key, order.id, issued.token)
    if kept is None:
        RecipientLink.create(order=order.id, link=issued.link.id, token_cipher=cipher)
    else:
        RecipientLink.update(link=issued.link.id, token_cipher=cipher).where(
            RecipientLink.order == order.id
        ).execute()
    audit(order, "tracking_link_issued", None, expiresAt=clock.iso(issued.link.expires_at), forMessages=True)
    return issued.url


# -- the late notice ---------------------------------------------------------------------------


def _late_minutes(rt: DispatchRuntime, order: Order, delay_minutes: int | None) -> int:
    from appliance.dispatch.tracking.service import _estimated_minutes  # the tracking page's estimate

    return delay_minutes or _estimated_minutes(rt, order) or 15


def preview_late(
    rt: DispatchRuntime, company_id: int, order_id: int, delay_minutes: int | None
) -> dict[str, Any]:
    """The late notice as it would go out, with its SMS encoding and segment count; the link is
    shown as a stand-in of the real one's length (its token is never shown)."""
    order = _own_order(company_id, order_id)
    settings = settings_of(company_id)
    company = Company.get_by_id(company_id)
    language = outbox.language_of(settings, order)
    minutes = _late_minutes(rt, order, delay_minutes)
    link = rt.settings.dispatch_public_url + "/t/" + "x" * TOKEN_LENGTH
    text = text_of(settings, company, order, "late", language, link, minutes)
    return {
        "text": text,
        "language": language,
        **sms_shape(text),
        "channels": [channel for channel, _ in outbox.channels(settings, order)],
        "delayMinutes": minutes,
    }


def send_late(
    rt: DispatchRuntime, company_id: int, order_id: int, actor_id: int, delay_minutes: int | None
) -> dict[str, Any]:
    """Queue the late notice on every channel the company has for this recipient (409 when it
    has none, or when the order is not out for delivery)."""
    preview = preview_late(rt, company_id, order_id, delay_minutes)
    with write_transaction(database):
        order = _own_order(company_id, order_id)
        if not late_notice_allowed(order):
            raise Conflict("The order is not out for delivery.", code="not_out_for_delivery")
        settings = settings_of(company_id)
        if not outbox.channels(settings, order):
            raise Conflict(
                "No SMS provider or e-mail is set up for this recipient.", code="no_recipient_channel"
            )
        minutes = preview["delayMinutes"]
        ids = outbox.queue(order, "late", settings, data={"minutes": minutes}, once=False)
        audit(order, "late_notified", actor_id, delayMinutes=minutes, language=preview["language"], sent=True)
    rows = RecipientMessage.select().where(RecipientMessage.id.in_(ids)).order_by(RecipientMessage.id)
    return {"messages": [message_body(r) for r in rows], "preview": preview}
