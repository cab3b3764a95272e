"""Search forms of names: every name (hy, ru, en, the default) folded to one Latin key so that the
usual ways of writing one Armenian or Russian street meet: Armenian letters, Russian letters,
ALA-LC ("Tʻumanyan", "Kʻajaznuni"), BGN/PCGN ("Pʼrroshyan", "Hanrapetutʼyan") and everyday Latin
("Tumanyan", "Qajaznuni", "Baghramyan") all fold to "tumanian", "kajaznuni", "bagramian"…

Armenian is transliterated here, letter by letter (anyascii writes "ու" as "ow", which met no Latin
spelling: "Թումանյան" became "towmanian" while everyone types "Tumanyan"); every other script goes
through anyascii. Index and query are folded by the same function, so a spelling folds to the same
tokens on both sides. The folding is deliberately lossy (kh/h, ts/c, y/i meet): the search ranks
by house number and distance after it, so a collision costs a place in the list, never a miss.
"""

from __future__ import annotations

import re

from anyascii import anyascii

# Armenian letters (lowercase; text is lowercased first) to the Latin most people type. "ու" is one
# vowel, u; "և" is "ev"; "ո" opening a word is "vo" and "ե" opening a word is "ye" in every
# everyday and BGN/PCGN spelling (folded below so that ALA-LC's bare "o"/"e" meet them).
_ARMENIAN = {
    "ա": "a", "բ": "b", "գ": "g", "դ": "d", "ե": "e", "զ": "z", "է": "e", "ը": "y", "թ": "t",
    "ժ": "zh", "ի": "i", "լ": "l", "խ": "kh", "ծ": "ts", "կ": "k", "հ": "h", "ձ": "dz", "ղ": "gh",
    "ճ": "ch", "մ": "m", "յ": "y", "ն": "n", "շ": "sh", "ո": "o", "չ": "ch", "պ": "p", "ջ": "j",
    "ռ": "r", "ս": "s", "վ": "v", "տ": "t", "ր": "r", "ց": "ts", "ւ": "v", "փ": "p", "ք": "k",
    "օ": "o", "ֆ": "f", "և": "ev",
}  # fmt: skip
_ARMENIAN_RUN = re.compile(r"[\u0531-\u058a]+")

# Digraphs and letters that differ between transliteration schemes, to one form each (the order
# matters: "kh" before "h" is touched, "zh" before "dj", "ye" before "y").
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
    ("rr", "r"),  # BGN/PCGN's ռ
)
_WORD = re.compile(r"[0-9a-z]+")
_OPENING_VO = re.compile(r"\bvo")  # "Vosketap", "Vorotan": ALA-LC writes the "o" alone


def _armenian(run: re.Match[str]) -> str:
    word = run.group(0)
    out = []
    i = 0
    while i < len(word):
        letter = word[i]
        if letter == "ո" and word[i + 1 : i + 2] == "ւ":
            out.append("u")
            i += 2
            continue
        if letter == "ո" and i == 0:
            out.append("vo")
        else:
            out.append(_ARMENIAN.get(letter, letter))
        i += 1
    return "".join(out)


def latin(text: str) -> str:
    """Lowercase Latin letters and digits of any script's text, folded."""
    lowered = _ARMENIAN_RUN.sub(_armenian, text.lower())
    folded = anyascii(lowered).lower()
    folded = re.sub(r"['`\u02bb\u02bc\u2019]", "", folded)  # ALA-LC's ʻ and BGN/PCGN's ʼ: aspiration
    for old, new in _FOLDS:
        folded = folded.replace(old, new)
    return _OPENING_VO.sub("o", folded)


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
