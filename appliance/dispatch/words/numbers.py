"""One way to write amounts and dates per language in the workbook exports (issue 46: amounts were
written "4,300 դր.", "3 200 драм" and "5200 AMD" side by side). The units are the console's and
the apps' (static/js/i18n.js ``amd``); the thousands separator is the reader's spreadsheet's own
(a format names only where it goes)."""

from __future__ import annotations

AMOUNT_FORMATS = {"hy": '#,##0 "դր."', "ru": '#,##0 "драм"', "en": '#,##0 "AMD"'}
DATE_TIME_FORMATS = {"hy": "dd.mm.yyyy hh:mm", "ru": "dd.mm.yyyy hh:mm", "en": "yyyy-mm-dd hh:mm"}
RATE_FORMAT = "0.0%"
MINUTES_FORMAT = "0.0"
