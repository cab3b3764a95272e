"""Search forms of names: every name (hy, ru, en, the default) and the Latin transliteration of
each (anyascii), folded so that the usual ways of spelling one Armenian or Russian street in Latin
letters meet: "Abovyan", "Abovian" and "Абовяна" → "abovian", "abovian", "abovian a"… Index and
query are folded by the same function, so a spelling folds to the same tokens on both sides."""

from __future__ import annotations

import re

from anyascii import anyascii

# Digraphs and letters that differ between transliteration schemes, to one form each (the order
# matters: "kh" before "h" is touched, "ye" before "y").
_FOLDS = (
    ("kh", "h"),
    ("x", "h"),
    ("gh", "g"),
    ("tz", "c"),
    ("ts", "c"),
    ("zh", "j"),
    ("dj", "j"),
    ("ch", "c"),
    ("sh", "s"),
    ("ou", "u"),
    ("ye", "e"),
    ("yo", "o"),
    ("yu", "u"),
    ("ya", "ia"),
    ("y", "i"),
    ("w", "v"),
    ("q", "k"),
)
_WORD = re.compile(r"[0-9a-z]+")


def latin(text: str) -> str:
    """Lowercase Latin letters and digits of any script's text (anyascii), folded."""
    folded = anyascii(text).lower().replace("'", "")
    for old, new in _FOLDS:
        folded = folded.replace(old, new)
    return folded


def tokens(text: str) -> list[str]:
    return _WORD.findall(latin(text))


def search_text(*names: str | None) -> str:
    """The indexed text of an entry: the folded tokens of every name, each once."""
    seen: dict[str, None] = {}
    for name in names:
        if name:
            for token in tokens(name):
                seen.setdefault(token, None)
    return " ".join(seen)
