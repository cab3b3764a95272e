"""The printable statement: one HTML page, no script, its style inline (a page to print or save as
PDF from the browser). Every value is escaped; the page is in the reader's language."""

from __future__ import annotations

import datetime as dt
from typing import Any

from markupsafe import escape

from appliance.dispatch.words import report_texts

TITLES = {
    "title": {"en": "Statement", "hy": "Քաղվածք", "ru": "Выписка"},
    "period": {"en": "Period", "hy": "Ժամանակահատված", "ru": "Период"},
    "delivered": {"en": "Delivered", "hy": "Առաքված", "ru": "Доставлено"},
    "returned": {"en": "Returned", "hy": "Վերադարձված", "ru": "Возвращено"},
    "paid": {"en": "Paid", "hy": "Վճարված", "ru": "Выплачено"},
    "unbalanced": {
        "en": "The cash does not match the cash ledger yet.",
        "hy": "Կանխիկը դեռ չի համընկնում դրամարկղի հաշվառման հետ։",
        "ru": "Наличные пока не сходятся с кассовым учётом.",
    },
}
COLUMNS = (
    "kind",
    "order",
    "external_ref",
    "finished_at",
    "collected_amount_amd",
    "delivery_fee_amd",
    "net_amd",
)


UNITS = {"hy": "դր.", "ru": "драм", "en": "AMD"}  # words/numbers.py's amount formats' units


def _amount(value: Any, lang: str) -> str:
    return f"{value:,} {UNITS.get(lang, 'AMD')}".replace(",", "\u00a0")


def render(statement: dict[str, Any], lines: list[list[object]], lang: str) -> str:
    def t(key: str) -> str:
        return TITLES[key].get(lang, TITLES[key]["en"])

    head = "".join(f"<th>{escape(report_texts.header(c, lang))}</th>" for c in COLUMNS)
    body = []
    for kind, public_id, ref, finished, _status, collected, fee, net in lines:
        when = finished.strftime("%Y-%m-%d %H:%M") if isinstance(finished, dt.datetime) else ""
        kind_text = report_texts.value("kind", kind, lang)
        cells = [
            kind_text,
            public_id,
            ref,
            when,
            _amount(collected, lang),
            _amount(fee, lang),
            _amount(net, lang),
        ]
        tag = "th" if kind == "total" else "td"
        body.append("<tr>" + "".join(f"<{tag}>{escape(str(c))}</{tag}>" for c in cells) + "</tr>")
    paid = "".join(
        f"<p>{escape(t('paid'))}: {escape(r['from'])} – {escape(r['to'])}, "
        f"{escape(_amount(r['netAmd'], lang))}, {escape(r['reference'])}</p>"
        for r in statement["remittances"]
    )
    warning = "" if statement["cash"]["balanced"] else f"<p class=warn>{escape(t('unbalanced'))}</p>"
    return (
        f"<!doctype html><html lang={escape(lang)}><head><meta charset=utf-8>"
        f"<title>{escape(t('title'))} — {escape(statement['shop']['name'])}</title>"
        "<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse;width:100%}"
        "td,th{border:1px solid #999;padding:4px 6px;text-align:left}.warn{color:#a00}"
        "@media print{body{margin:0}}</style></head><body>"
        f"<h1>{escape(t('title'))}: {escape(statement['shop']['name'])}</h1>"
        f"<p>{escape(t('period'))}: {escape(statement['from'])} – {escape(statement['to'])} "
        f"({escape(t('delivered'))}: {statement['delivered']}, "
        f"{escape(t('returned'))}: {statement['returned']})</p>"
        f"{warning}<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{paid}</body></html>"
    )
