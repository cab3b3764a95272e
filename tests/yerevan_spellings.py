"""The five ways a Yerevan address is typed, for the address search's measurement (tests and
bench/geo_search): Armenian and Russian as the map names the street, and three Latin spellings of
the Armenian written here from the published tables, independently of the search's own folding
(appliance/dispatch/geocoding/names.py), so that the measurement cannot agree with itself:

- ALA-LC (Library of Congress, 1997): modifier letter ʻ for aspirates, ē, ě, ṙ, ō, w, "ու" u;
- BGN/PCGN (1981): ’ for aspirates, rr for ռ, ye/vo at the start of a word, yev for և;
- everyday Latin: the street's English name, as shops and signs write it.
"""

from __future__ import annotations

import re

ALA_LC = {
    "ա": "a", "բ": "b", "գ": "g", "դ": "d", "ե": "e", "զ": "z", "է": "ē", "ը": "ě", "թ": "tʻ",
    "ժ": "zh", "ի": "i", "լ": "l", "խ": "kh", "ծ": "ts", "կ": "k", "հ": "h", "ձ": "dz", "ղ": "gh",
    "ճ": "ch", "մ": "m", "յ": "y", "ն": "n", "շ": "sh", "ո": "o", "չ": "chʻ", "պ": "p", "ջ": "j",
    "ռ": "ṙ", "ս": "s", "վ": "v", "տ": "t", "ր": "r", "ց": "tsʻ", "ւ": "w", "փ": "pʻ", "ք": "kʻ",
    "օ": "ō", "ֆ": "f", "և": "ew",
}  # fmt: skip
BGN_PCGN = {
    "ա": "a", "բ": "b", "գ": "g", "դ": "d", "ե": "e", "զ": "z", "է": "e", "ը": "y", "թ": "t’",
    "ժ": "zh", "ի": "i", "լ": "l", "խ": "kh", "ծ": "ts", "կ": "k", "հ": "h", "ձ": "dz", "ղ": "gh",
    "ճ": "ch", "մ": "m", "յ": "y", "ն": "n", "շ": "sh", "ո": "o", "չ": "ch’", "պ": "p", "ջ": "j",
    "ռ": "rr", "ս": "s", "վ": "v", "տ": "t", "ր": "r", "ց": "ts’", "ւ": "v", "փ": "p’", "ք": "k’",
    "օ": "o", "ֆ": "f", "և": "ev",
}  # fmt: skip
_VOWELS = set("աեէըիոօ")
HY_STREET_WORDS = ("փողոց", "պողոտա")
RU_STREET_WORDS = ("улица", "проспект")
EN_STREET_WORDS = ("Street", "Avenue")


def _romanise(text: str, table: dict[str, str], bgn: bool) -> str:
    out: list[str] = []
    for word in re.split(r"(\W+)", text):
        letters: list[str] = []
        lower = word.lower()
        i = 0
        while i < len(lower):
            letter = lower[i]
            if letter == "ո" and lower[i + 1 : i + 2] == "ւ":
                letters.append("u")
                i += 2
                continue
            previous = lower[i - 1] if i else ""
            if bgn and letter == "ե" and (i == 0 or previous in _VOWELS):
                letters.append("ye")
            elif bgn and letter == "ո" and i == 0:
                letters.append("vo")
            elif bgn and letter == "և" and i == 0:
                letters.append("yev")
            else:
                letters.append(table.get(letter, letter))
            i += 1
        romanised = "".join(letters)
        out.append(romanised[:1].upper() + romanised[1:] if word[:1].isupper() else romanised)
    return "".join(out)


def ala_lc(text: str) -> str:
    return _romanise(text, ALA_LC, bgn=False)


def bgn_pcgn(text: str) -> str:
    return _romanise(text, BGN_PCGN, bgn=True)


def _without(name: str, words: tuple[str, ...]) -> str:
    return " ".join(w for w in name.split() if w not in words)


def spellings(hy: str, ru: str, en: str) -> dict[str, tuple[str, str]]:
    """{way: (the street with its street word, without it)} for one street's names."""
    bare_hy = _without(hy, HY_STREET_WORDS)
    return {
        "hy": (hy, bare_hy),
        "ru": (ru, _without(ru, RU_STREET_WORDS)),
        "ALA-LC": (ala_lc(hy), ala_lc(bare_hy)),
        "BGN/PCGN": (bgn_pcgn(hy), bgn_pcgn(bare_hy)),
        "Latin": (en, _without(en, EN_STREET_WORDS)),
    }


APARTMENT_WORD = {"hy": "բն.", "ru": "кв.", "ALA-LC": "kv.", "BGN/PCGN": "apt.", "Latin": "apt"}


def typed_ways(hy: str, ru: str, en: str, number: str) -> list[tuple[str, str, str | None]]:
    """(way, query, the apartment it names) for one house: each spelling with and without the
    street word, bare and with apartment 12 (by its word, and as "number/12")."""
    queries: list[tuple[str, str, str | None]] = []
    for way, (full, bare) in spellings(hy, ru, en).items():
        for street in (full, bare):
            queries.append((way, f"{street} {number}", None))
            queries.append((way, f"{street} {number}, {APARTMENT_WORD[way]} 12", "12"))
            queries.append((way, f"{street} {number}/12", "12"))
    return queries
