"""Order statuses and failure reasons as people read them, in hy, ru and en."""

from __future__ import annotations

STATUS_NAMES: dict[str, dict[str, str]] = {
    "draft": {"hy": "սևագիր", "ru": "черновик", "en": "draft"},
    "ready": {"hy": "պատրաստ", "ru": "готов", "en": "ready"},
    "assigned": {"hy": "նշանակված", "ru": "назначен", "en": "assigned"},
    "picked_up": {"hy": "վերցված", "ru": "забран", "en": "picked up"},
    "arrived": {"hy": "տեղում է", "ru": "на месте", "en": "arrived"},
    "delivered": {"hy": "առաքված", "ru": "доставлен", "en": "delivered"},
    "failed": {"hy": "չառաքված", "ru": "не доставлен", "en": "failed"},
    "cancelled": {"hy": "չեղարկված", "ru": "отменён", "en": "cancelled"},
}

FAILURE_REASONS: dict[str, dict[str, str]] = {
    "recipient_absent": {
        "hy": "ստացողը բացակա էր",
        "ru": "получателя нет на месте",
        "en": "recipient absent",
    },
    "refused": {"hy": "ստացողը հրաժարվեց", "ru": "получатель отказался", "en": "refused"},
    "wrong_address": {"hy": "սխալ հասցե", "ru": "неверный адрес", "en": "wrong address"},
    "other": {"hy": "այլ պատճառ", "ru": "другая причина", "en": "other"},
}


def status_name(status: str | None, lang: str) -> str:
    if not status:
        return ""
    return STATUS_NAMES.get(status, {}).get(lang, status)


def reason_name(reason: str | None, lang: str) -> str:
    if not reason:
        return ""
    return FAILURE_REASONS.get(reason, {}).get(lang, reason)
