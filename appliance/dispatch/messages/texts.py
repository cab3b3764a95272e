"""The texts of recipient messages: built-in ones per event and language, the company's own
templates, rendering, and the SMS encoding and segment count (the same split the sender uses)."""

from __future__ import annotations

from smpplib import consts, gsm

from appliance.dispatch.tracking.texts import LATE_TEXTS

EVENTS = ("assigned", "picked_up", "arriving", "delivered", "failed", "late")
LANGUAGES = ("hy", "ru", "en")
PLACEHOLDERS = ("{company}", "{link}", "{minutes}", "{order}")

DEFAULT_TEXTS: dict[str, dict[str, str]] = {
    "assigned": {
        "hy": "{company}: Ձեր պատվերը {order} հանձնվել է առաքիչին։ Հետևեք՝ {link}",
        "ru": "{company}: ваш заказ {order} передан курьеру. Отслеживание: {link}",
        "en": "{company}: your order {order} is with a courier. Track it: {link}",
    },
    "picked_up": {
        "hy": "{company}: Ձեր պատվերը {order} ճանապարհին է։ Հետևեք՝ {link}",
        "ru": "{company}: ваш заказ {order} в пути. Отслеживание: {link}",
        "en": "{company}: your order {order} is on its way. Track it: {link}",
    },
    "arriving": {
        "hy": "{company}: առաքիչը կժամանի մոտ {minutes} րոպեից։ {link}",
        "ru": "{company}: курьер будет примерно через {minutes} мин. {link}",
        "en": "{company}: the courier arrives in about {minutes} min. {link}",
    },
    "delivered": {
        "hy": "{company}: Ձեր պատվերը {order} առաքված է։ Շնորհակալություն։ {link}",
        "ru": "{company}: ваш заказ {order} доставлен. Спасибо! {link}",
        "en": "{company}: your order {order} was delivered. Thank you! {link}",
    },
    "failed": {
        "hy": "{company}: չհաջողվեց առաքել Ձեր պատվերը {order}։ Մենք կկապվենք Ձեզ հետ։ {link}",
        "ru": "{company}: не удалось доставить заказ {order}. Мы свяжемся с вами. {link}",
        "en": "{company}: we could not deliver your order {order}. We will contact you. {link}",
    },
    "late": LATE_TEXTS,
}


def template_for(templates: dict[str, dict[str, str]], event: str, language: str) -> str:
    """The company's template for the event and language, else the built-in text."""
    own = (templates.get(event) or {}).get(language)
    return own or DEFAULT_TEXTS[event][language]


def render(template: str, *, company: str, link: str, order: str, minutes: int | None) -> str:
    # Plain replacement (not str.format): a company's template may contain other braces.
    return (
        template.replace("{company}", company)
        .replace("{order}", order)
        .replace("{minutes}", str(minutes) if minutes is not None else "")
        .replace("{link}", link)
    )


def sms_parts(text: str) -> tuple[list[bytes], int, int]:
    """The submit_sm parts, data_coding and esm_class: GSM 03.38 when every character has one,
    else UCS-2 (Armenian and Russian always), split with a concatenation header past one part."""
    parts, coding, esm_class = gsm.make_parts(text, encoding=consts.SMPP_ENCODING_DEFAULT)
    return list(parts), coding, esm_class


def sms_shape(text: str) -> dict[str, object]:
    """What the console shows before sending: the encoding and how many SMS it costs."""
    parts, coding, _ = sms_parts(text)
    return {"encoding": "ucs2" if coding == consts.SMPP_ENCODING_ISO10646 else "gsm7", "segments": len(parts)}
