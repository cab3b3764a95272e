"""The recipient's tracking page (/t/<token>) as its first answer: the stage, the arrival estimate
and the courier's line written into the HTML, in the recipient's language, so that a phone on 3G
shows them at first paint; the page's script (static/js/track-page.js) then keeps them live from
the same view and the same words, handed over in the page (one source for both: these TEXTS)."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any

import jinja2

from appliance.common.clock import YEREVAN

LANGUAGES = ("hy", "ru", "en")
COOKIE = "track-lang"  # the language the recipient chose on this device (nothing else is kept)

# Armenian first; Russian and English. {minutes} and {count} are filled in.
TEXTS: dict[str, dict[str, str]] = {
    "hy": {
        "title": "Առաքման հետևում", "created": "Պատվերն ընդունված է", "assigned": "Առաքիչը նշանակված է",
        "picked_up": "Ճանապարհին է", "arrived": "Առաքիչը տեղում է", "delivered": "Առաքված է",
        "failed": "Առաքումը չհաջողվեց", "cancelled": "Չեղարկված է",
        "recipient_absent": "ոչ ոք տանը չէր", "refused": "ծանրոցից հրաժարվել են",
        "wrong_address": "հասցեն սխալ էր", "other": "այլ պատճառով",
        "eta": "Կժամանի մոտ {minutes} րոպեից", "stopsAhead": "Ձեզնից առաջ՝ {count} կանգառ",
        "notDelivered": "Չի առաքվել՝ ", "courier": "Առաքիչ՝ ", "call": " · զանգել",
        "codeLabel": "Առաքիչին ասեք այս կոդը՝", "rateQuestion": "Ինչպե՞ս անցավ առաքումը",
        "comment": "Մեկնաբանություն (ոչ պարտադիր)", "good": "Լավ էր", "bad": "Վատ էր",
        "thanks": "Շնորհակալություն գնահատականի համար։", "rated": "Արդեն գնահատված է։",
        "gone": "Այս հղումն այլևս վավեր չէ։", "questions": "Հարցեր՝ ", "order": "Պատվեր",
        "address": "Հասցե", "payment": "Վճարում", "cash": " դր. կանխիկ", "prepaid": "Նախավճարված",
        "fiscal": "Հարկային կտրոն", "fiscalLink": "Կտրոնը e-ՀԴՄ-ում", "fiscalQr": "Կտրոնի QR կոդը",
        "deliveredAt": "Առաքված", "to": " ստացող՝ ", "proof": "Առաքման լուսանկար",
        "signature": "Ստացողի ստորագրությունը",
        "language": "Լեզու", "map": "Առաքման քարտեզ", "markerCourier": "Առաքիչը",
        "markerDestination": "Առաքման հասցեն", "zoomIn": "Մեծացնել", "zoomOut": "Փոքրացնել",
        "resetBearing": "Հյուսիսը վերև", "attribution": "Քարտեզի աղբյուրները", "timeline": "Ընթացք",
        "window": "Առաքումը՝ {start}–{end} միջակայքում", "about": ", մոտավորապես {time}",
        "showMap": "Ցույց տալ առաքիչին քարտեզի վրա", "mapLoading": "Քարտեզը բեռնվում է…",
    },
    "ru": {
        "title": "Отслеживание доставки", "created": "Заказ принят", "assigned": "Курьер назначен",
        "picked_up": "В пути", "arrived": "Курьер на месте", "delivered": "Доставлено",
        "failed": "Доставка не удалась", "cancelled": "Отменено",
        "recipient_absent": "никого не было дома", "refused": "от посылки отказались",
        "wrong_address": "адрес был неверным", "other": "по другой причине",
        "eta": "Прибудет примерно через {minutes} мин", "stopsAhead": "Перед вами остановок: {count}",
        "notDelivered": "Не доставлено: ", "courier": "Курьер: ", "call": " · позвонить",
        "codeLabel": "Назовите курьеру этот код доставки:", "rateQuestion": "Как прошла доставка?",
        "comment": "Комментарий (необязательно)", "good": "Хорошо", "bad": "Плохо",
        "thanks": "Спасибо за оценку.", "rated": "Оценка уже получена.",
        "gone": "Эта ссылка больше не действует.", "questions": "Вопросы? ", "order": "Заказ",
        "address": "Адрес", "payment": "Оплата", "cash": " драм наличными", "prepaid": "Оплачено заранее",
        "fiscal": "Фискальный чек", "fiscalLink": "Чек в e-HDM", "fiscalQr": "QR-код чека",
        "deliveredAt": "Доставлено", "to": " получатель: ", "proof": "Фото доставки",
        "signature": "Подпись получателя",
        "language": "Язык", "map": "Карта доставки", "markerCourier": "Курьер",
        "markerDestination": "Адрес доставки", "zoomIn": "Приблизить", "zoomOut": "Отдалить",
        "resetBearing": "Север вверху", "attribution": "Источники карты", "timeline": "Ход доставки",
        "window": "Доставка с {start} до {end}", "about": ", примерно в {time}",
        "showMap": "Показать курьера на карте", "mapLoading": "Карта загружается…",
    },
    "en": {
        "title": "Delivery tracking", "created": "Order received", "assigned": "Courier assigned",
        "picked_up": "On the way", "arrived": "The courier has arrived", "delivered": "Delivered",
        "failed": "Delivery failed", "cancelled": "Cancelled",
        "recipient_absent": "nobody was there", "refused": "the parcel was refused",
        "wrong_address": "the address was wrong", "other": "another reason",
        "eta": "Arriving in about {minutes} min", "stopsAhead": "{count} stops before yours",
        "notDelivered": "Not delivered: ", "courier": "Courier: ", "call": " · call",
        "codeLabel": "Tell the courier this delivery code:", "rateQuestion": "How was your delivery?",
        "comment": "Comment (optional)", "good": "Good", "bad": "Bad",
        "thanks": "Thank you for your rating.", "rated": "Already rated.",
        "gone": "This tracking link is no longer valid.", "questions": "Questions? ", "order": "Order",
        "address": "Address", "payment": "Payment", "cash": " AMD in cash", "prepaid": "Prepaid",
        "fiscal": "Fiscal receipt", "fiscalLink": "The receipt on e-HDM", "fiscalQr": "The receipt's QR code",
        "deliveredAt": "Delivered", "to": " to ", "proof": "Proof of delivery",
        "signature": "The recipient's signature",
        "language": "Language", "map": "Delivery map", "markerCourier": "The courier",
        "markerDestination": "The delivery address", "zoomIn": "Zoom in", "zoomOut": "Zoom out",
        "resetBearing": "North up", "attribution": "Map sources", "timeline": "Progress",
        "window": "Between {start} and {end}", "about": ", about {time}",
        "showMap": "Show the courier on the map", "mapLoading": "Loading the map…",
    },
}  # fmt: skip


def language(
    asked: str | None,
    kept: str | None,
    recipient: str | None,
    accept_language: list[str],
    company: str | None,
) -> str:
    """?lang=, then this device's earlier choice (its cookie), then the language the order names
    for its recipient, then the browser's, then the company's default for recipients, then
    Armenian (docs/tracking.md)."""
    for candidate in (asked, kept, recipient, *accept_language, company):
        code = (candidate or "")[:2].lower()
        if code in LANGUAGES:
            return code
    return "hy"


def _window(view: dict[str, Any]) -> dict[str, str] | None:
    window = view.get("deliveryWindow")
    return window if window and window.get("start") and window.get("end") else None


def showing_eta(view: dict[str, Any]) -> bool:
    on_the_way = view["state"] in ("on_the_way", "preparing")
    return on_the_way and (view["etaSeconds"] is not None or _window(view) is not None)


def _clock(iso: str) -> str:
    """HH:MM in Yerevan, as the page's script writes it."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(YEREVAN).strftime("%H:%M")


def eta_text(texts: dict[str, str], view: dict[str, Any]) -> str:
    """The estimate against the delivery window when the order has one ("between 11:00 and 14:00,
    about 12:15"), else the minutes of the road estimate and the waits for earlier stops' windows."""
    window = _window(view)
    if window is not None:
        text = (
            texts["window"]
            .replace("{start}", _clock(window["start"]))
            .replace("{end}", _clock(window["end"]))
        )
        if view.get("expectedAt"):
            text += texts["about"].replace("{time}", _clock(view["expectedAt"]))
        return text
    seconds = view["etaSeconds"] + (view.get("waitSeconds") or 0)
    return texts["eta"].replace("{minutes}", str(max(1, round(seconds / 60))))


def _detail(texts: dict[str, str], view: dict[str, Any]) -> str:
    parts = []
    if view["stopsAhead"] is not None and view["state"] != "delivered":
        parts.append(texts["stopsAhead"].replace("{count}", str(view["stopsAhead"])))
    if view["state"] == "failed" and view["failureReason"]:
        parts.append(texts["notDelivered"] + texts[view["failureReason"]])
    return " · ".join(parts)


_environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)


@functools.lru_cache(maxsize=4)
def _compiled(template: str) -> jinja2.Template:
    return _environment.from_string(template)


def render(template: bytes, view: dict[str, Any] | None, lang: str) -> bytes:
    """The page for ``view`` (None: a link that is unknown, expired or revoked)."""
    texts = TEXTS[lang]
    values: dict[str, Any] = {
        "lang": lang,
        "t": texts,
        "stage": view["stage"] if view else "gone",
        "state": view["state"] if view else "gone",
        "company": view["company"]["name"] if view else "…",
        "headline": texts[view["stage"]] if view else texts["gone"],
        "eta": eta_text(texts, view) if view and showing_eta(view) else "",
        "eta_seconds": view["etaSeconds"]
        if view and showing_eta(view) and view["etaSeconds"] is not None
        else "",
        "detail": _detail(texts, view) if view else "",
        # The courier's line and the delivery code too: nothing above the map appears later.
        "courier_line": texts["courier"] + view["courierName"] if view and view["courierName"] else "",
        "code": (view["otpCode"] or "") if view else "",
        "show_map": view is not None and view["state"] in ("on_the_way", "preparing"),
        # Everything the script needs to go on without asking again: the view and all the words.
        "page_data": json.dumps({"view": view, "texts": TEXTS, "lang": lang}, ensure_ascii=False),
    }
    return _compiled(template.decode()).render(values).encode()
