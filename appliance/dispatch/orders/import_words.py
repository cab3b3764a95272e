"""The import's problems in the reader's language (issue 46): each message the import itself
writes (cells.py, importing.py, the address index's reasons) in Armenian and Russian, chosen by
the request's Accept-Language (hy, ru or en; English when the header names none of them, as
before). The column keeps the API's name (`column`, clients rely on it); `header` names the
column as the file's own header row does ("Հեռախոս"), so a person reads their own sheet's words.
A message this table does not know stays as written."""

from __future__ import annotations

import re
from typing import Any

LANGUAGES = ("hy", "ru", "en")

# (English pattern, Armenian, Russian): {name} groups are carried over as written.
_MESSAGES: list[tuple[str, str, str]] = [
    (r"expected text, found a date", "սպասվում էր տեքստ, գտնվել է ամսաթիվ", "ожидался текст, а не дата"),
    (
        r"required with the other coordinate",
        "պարտադիր է մյուս կոորդինատի հետ",
        "нужна вместе с другой координатой",
    ),
    (r"expected a number, found (?P<v>.*)", "սպասվում էր թիվ, գտնվել է {v}", "ожидалось число, найдено {v}"),
    (r"expected a number", "սպասվում էր թիվ", "ожидалось число"),
    (
        r"expected a whole amount in AMD \(no fractions of a dram\)",
        "սպասվում էր ամբողջ գումար դրամով (առանց լումաների)",
        "ожидалась целая сумма в драмах (без долей драма)",
    ),
    (
        r"expected a whole amount in AMD, found (?P<v>.*)",
        "սպասվում էր ամբողջ գումար դրամով, գտնվել է {v}",
        "ожидалась целая сумма в драмах, найдено {v}",
    ),
    (r"expected a whole amount in AMD", "սպասվում էր ամբողջ գումար դրամով", "ожидалась целая сумма в драмах"),
    (
        r"expected yes or no, found (?P<v>.*)",
        "սպասվում էր այո կամ ոչ, գտնվել է {v}",
        "ожидалось да или нет, найдено {v}",
    ),
    (r"not a phone number: (?P<v>.*)", "հեռախոսահամար չէ՝ {v}", "не номер телефона: {v}"),
    (
        r"not a valid phone number: (?P<v>.*)",
        "անվավեր հեռախոսահամար՝ {v}",
        "недействительный номер телефона: {v}",
    ),
    (
        r"expected a date and a time, such as 2026-11-26 10:00, found (?P<v>.*)",
        "սպասվում էր ամսաթիվ և ժամ, օրինակ՝ 2026-11-26 10:00, գտնվել է {v}",
        "ожидались дата и время, например 2026-11-26 10:00, найдено {v}",
    ),
    (
        r"expected a date and a time, such as 2026-11-26 10:00",
        "սպասվում էր ամսաթիվ և ժամ, օրինակ՝ 2026-11-26 10:00",
        "ожидались дата и время, например 2026-11-26 10:00",
    ),
    (r"not a time of day: (?P<v>.*)", "օրվա ժամ չէ՝ {v}", "не время суток: {v}"),
    (
        r"no coordinates: give lat and lon",
        "կոորդինատներ չկան. նշեք լայնությունը և երկայնությունը",
        "нет координат: укажите широту и долготу",
    ),
    (
        r"repeats the order number of row (?P<v>\d+)",
        "կրկնում է {v}-րդ տողի պատվերի համարը",
        "повторяет номер заказа из строки {v}",
    ),
    (
        r"the address is not in the address index: give lat and lon",
        "հասցեն չկա հասցեների ցանկում. նշեք կետը քարտեզի վրա",
        "адреса нет в справочнике адресов: поставьте точку на карте",
    ),
    (
        r"the house number is not in the address index \(the street: (?P<v>.*)\): give lat and lon",
        "տան համարը չկա հասցեների ցանկում (փողոցը՝ {v}). նշեք կետը քարտեզի վրա",
        "номера дома нет в справочнике адресов (улица: {v}): поставьте точку на карте",
    ),
    (
        r"(?P<v>.*) is outside the service area",
        "{v}՝ սպասարկման տարածքից դուրս է",
        "{v}: вне зоны обслуживания",
    ),
    (
        r"no coordinates,? and .*address index.*",
        "կոորդինատներ չկան, և հասցեների ցանկը պատրաստ չէ. նշեք կետը քարտեզի վրա",
        "нет координат, а справочник адресов не построен: поставьте точку на карте",
    ),
    (r"Field required", "պարտադիր է", "обязательное поле"),
]
_COMPILED = [(re.compile(f"^{pattern}$", re.DOTALL), hy, ru) for pattern, hy, ru in _MESSAGES]


def translate(message: str, language: str) -> str:
    if language not in ("hy", "ru"):
        return message
    for pattern, hy, ru in _COMPILED:
        matched = pattern.match(message)
        if matched:
            return (hy if language == "hy" else ru).format(**matched.groupdict())
    return message


def request_language(accept_language: Any) -> str:
    """hy, ru or en from a request's Accept-Language (werkzeug's parsed header); en without one."""
    return accept_language.best_match(LANGUAGES) or "en"


def localise(result: dict[str, Any], language: str) -> dict[str, Any]:
    """The import's answer with its problems' messages in ``language``."""
    for key in ("refused", "needsPin"):
        for item in result.get(key, []):
            item["message"] = translate(item["message"], language)
    return result
