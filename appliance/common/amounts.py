"""Amounts as people read them: minor units shown in the asset's units with its decimals
(``100249794103003503032`` wei → ``100.249794103003503032 ETH``). Exact (no floats); machine
outputs (--json, the APIs) keep minor units."""

from __future__ import annotations


def in_units(minor: int | str | None, decimals: int, code: str = "") -> str:
    if minor is None or minor == "":
        return "—"
    value = int(minor)
    sign, value = ("-", -value) if value < 0 else ("", value)
    whole, fraction = divmod(value, 10**decimals) if decimals > 0 else (value, 0)
    text = f"{whole:,}".replace(",", " ")  # a thin grouping readable in every language
    if decimals > 0 and fraction:
        text += "." + str(fraction).rjust(decimals, "0").rstrip("0")
    return f"{sign}{text} {code}".rstrip()
