"""The workbook exports for people: column headers and coded values (statuses, failure reasons,
row kinds) in hy, ru or en. The CSV exports keep the column codes and raw values, for programs
(docs/reports.md)."""

from __future__ import annotations

import re

from appliance.dispatch.words.names import reason_name, status_name

T = dict[str, str]

HEADERS: dict[str, T] = {
    "order": {"hy": "Պատվեր", "ru": "Заказ", "en": "Order"},
    "external_ref": {"hy": "Խանութի համար", "ru": "Номер магазина", "en": "Shop reference"},
    "created_at": {"hy": "Ստեղծված", "ru": "Создан", "en": "Created"},
    "window_start": {"hy": "Միջակայքի սկիզբ", "ru": "Окно с", "en": "Window from"},
    "window_end": {"hy": "Միջակայքի ավարտ", "ru": "Окно до", "en": "Window to"},
    "finished_at": {"hy": "Ավարտված", "ru": "Завершён", "en": "Finished"},
    "status": {"hy": "Կարգավիճակ", "ru": "Статус", "en": "Status"},
    "courier": {"hy": "Առաքիչ", "ru": "Курьер", "en": "Courier"},
    "recipient": {"hy": "Ստացող", "ru": "Получатель", "en": "Recipient"},
    "address_hy": {"hy": "Հասցե", "ru": "Адрес", "en": "Address"},
    "amount_amd": {"hy": "Գումար", "ru": "Сумма", "en": "Amount"},
    "cod_amount_amd": {"hy": "Վճարում առաքման պահին", "ru": "Наложенный платёж", "en": "Cash on delivery"},
    "collected_amount_amd": {"hy": "Հավաքված", "ru": "Получено", "en": "Collected"},
    "failure_reason": {"hy": "Չառաքման պատճառ", "ru": "Причина недоставки", "en": "Failure reason"},
    "kind": {"hy": "Տող", "ru": "Строка", "en": "Row"},
    "collected_at": {"hy": "Հավաքման ժամ", "ru": "Время получения", "en": "Collected at"},
    "settlement": {"hy": "Հանձնում", "ru": "Сдача кассы", "en": "Handover"},
    "settlement_status": {"hy": "Հանձնման կարգավիճակ", "ru": "Статус сдачи", "en": "Handover status"},
    "submitted_at": {"hy": "Հանձնված", "ru": "Сдано", "en": "Submitted"},
    "confirmed_at": {"hy": "Հաստատված", "ru": "Подтверждено", "en": "Confirmed"},
    "confirmed_by": {"hy": "Հաստատող", "ru": "Подтвердил", "en": "Confirmed by"},
    "expected_amd": {"hy": "Սպասվող", "ru": "Ожидалось", "en": "Expected"},
    "received_amd": {"hy": "Ստացված", "ru": "Принято", "en": "Received"},
    "shortfall_amd": {"hy": "Պակասորդ", "ru": "Недостача", "en": "Shortfall"},
    "deliveries": {"hy": "Առաքումներ", "ru": "Доставки", "en": "Deliveries"},
    "failures": {"hy": "Չառաքումներ", "ru": "Недоставки", "en": "Failures"},
    "failures_by_reason": {"hy": "Ըստ պատճառի", "ru": "По причинам", "en": "Failures by reason"},
    "delivered_with_window": {"hy": "Միջակայքով", "ru": "С окном", "en": "With a window"},
    "on_time": {"hy": "Ժամանակին", "ru": "Вовремя", "en": "On time"},
    "on_time_rate": {"hy": "Ժամանակին (%)", "ru": "Вовремя (%)", "en": "On-time rate"},
    "average_pickup_to_delivery_minutes": {
        "hy": "Միջին րոպե վերցնելուց առաքում",
        "ru": "Среднее, мин от забора до доставки",
        "en": "Average minutes, pick-up to delivery",
    },
    # Shop statements (statements/service.py).
    "delivery_fee_amd": {"hy": "Առաքման վճար", "ru": "Стоимость доставки", "en": "Delivery fee"},
    "net_amd": {"hy": "Վճարման ենթակա", "ru": "К выплате", "en": "Net owed"},
}

KINDS: dict[str, T] = {
    "collection": {"hy": "հավաքում", "ru": "получение", "en": "collection"},
    "handover": {"hy": "հանձնում", "ru": "сдача кассы", "en": "handover"},
    "delivered": {"hy": "առաքված", "ru": "доставлен", "en": "delivered"},
    "returned": {"hy": "վերադարձ", "ru": "возврат", "en": "returned"},
    "total": {"hy": "ընդամենը", "ru": "итого", "en": "total"},
}
SETTLEMENT_STATUSES: dict[str, T] = {
    "submitted": {"hy": "սպասում է հաստատման", "ru": "ждёт подтверждения", "en": "awaiting confirmation"},
    "confirmed": {"hy": "հաստատված", "ru": "подтверждено", "en": "confirmed"},
}

_REASON_COUNT = re.compile(r"(\w+): (\d+)")


def header(column: str, lang: str) -> str:
    return HEADERS.get(column, {}).get(lang, column)


def value(column: str, raw: object, lang: str) -> object:
    """A coded cell as people read it; any other cell as it is."""
    if not isinstance(raw, str) or not raw:
        return raw
    if column == "status":
        return status_name(raw, lang)
    if column == "failure_reason":
        return reason_name(raw, lang)
    if column == "kind":
        return KINDS.get(raw, {}).get(lang, raw)
    if column == "settlement_status":
        return SETTLEMENT_STATUSES.get(raw, {}).get(lang, raw)
    if column == "failures_by_reason":
        return _REASON_COUNT.sub(lambda m: f"{reason_name(m[1], lang)}: {m[2]}", raw)
    return raw
