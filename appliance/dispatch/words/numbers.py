"""One way to write amounts and dates per language (issue 46: amounts were written "4,300 դր.",
"3 200 драм" and "5200 AMD" side by side). Spreadsheet formats for the workbook exports; the
thousands separator is the reader's spreadsheet's own (a format names only where it goes)."""

from __future__ import annotations

AMOUNT_FORMATS = {"hy": '#,##0 "դր."', "ru": '#,##0 "драм"', "en": '#,##0 "AMD"'}
DATE_TIME_FORMATS = {"hy": "dd.mm.yyyy hh:mm", "ru": "dd.mm.yyyy hh:mm", "en": "yyyy-mm-dd hh:mm"}
RATE_FORMAT = "0.0%"
MINUTES_FORMAT = "0.0"

_SEPARATORS = {"hy": ",", "ru": "\u202f", "en": ","}
_UNITS = {"hy": "դր.", "ru": "драм", "en": "AMD"}


def amount(value: int, lang: str) -> str:
    """``value`` AMD as text: "4,300 դր.", "4 300 драм", "4,300 AMD"."""
    grouped = f"{value:,}".replace(",", _SEPARATORS.get(lang, ","))
    return f"{grouped}\u00a0{_UNITS.get(lang, 'AMD')}"
