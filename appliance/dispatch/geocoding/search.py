"""Searching the address index (build.py) as people type an address (query.py takes it apart):

- the street's words match in any order, each as the start of a word of the index (so the word
  being typed, "Abov", and a name's grammatical ending, "Абовяна", "Մաշտոցի", both match);
- the house number matches exactly ("6/12" is house 6/12 when the index has one, else house 6,
  apartment 12); the apartment comes back with the answer, for ``addressDetails``;
- a word the index does not know is matched with one typo (a letter wrong, missing, extra or two
  letters swapped) against the index's own words;
- the answers are ranked best first: the house itself, then streets and places (when the query
  names no number, or a number the index does not have), FTS5's bm25 rank, and the distance from
  ``near`` (the depot, the map's centre) when given.

The index is opened read-only per search: a routing build that swaps the road data in swaps the
index with it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from appliance.dispatch.geo_types import in_service_area
from appliance.dispatch.geocoding.build import INDEX_NAME, INDEX_VERSION
from appliance.dispatch.geocoding.query import parse
from appliance.dispatch.routing.build import routing_dir

CANDIDATES = 200  # read by rank, then re-ranked
HOUSE_FIRST = {"address": 0, "entrance": 1, "street": 2, "place": 3}
STREET_FIRST = {"street": 0, "place": 1, "address": 2, "entrance": 3}
_ENDINGS = "aeiou"  # a final vowel left off a typed word: the grammatical endings of hy and ru names

Row = tuple[str, str, float, float, "str | None", float]


class IndexMissing(Exception):
    """No address index: the road data was not built (or built by a version without one)."""


@dataclass(frozen=True)
class Found:
    label: str
    lat: float
    lon: float
    kind: str
    apartment: str | None = None

    def body(self) -> dict[str, object]:
        return {
            "label": self.label,
            "lat": self.lat,
            "lon": self.lon,
            "kind": self.kind,
            "apartment": self.apartment,
        }


def index_file(data_dir: Path) -> Path:
    return routing_dir(Path(data_dir)) / "current" / INDEX_NAME


def _stem(word: str) -> str:
    """The part of a typed word matched as a prefix: "aboviana" (Абовяна) → "abovian", which
    begins the Armenian "abovian" too; short words and numbers are kept whole."""
    if len(word) >= 5 and word[-1] in _ENDINGS and not word.isdigit():
        return word[:-1]
    return word


def _match(words: list[str], numbers: list[str]) -> str:
    # Each word quoted (FTS5 syntax in a query is text, never an operator); street words are
    # prefixes, the house number's parts whole words.
    quoted = [f'"{_stem(w)}"*' for w in words] + [f'"{n}"' for n in numbers]
    return " AND ".join(quoted)


def _distance_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    dlat = math.radians(b[0] - a[0])
    dlon = math.radians(b[1] - a[1]) * math.cos(math.radians((a[0] + b[0]) / 2))
    return 6_371_000 * math.hypot(dlat, dlon)


def open_index(data_dir: Path) -> sqlite3.Connection:
    path = index_file(data_dir)
    if not path.is_file():
        raise IndexMissing("No address index: build the road data (appliance routing build).")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if db.execute("PRAGMA user_version").fetchone()[0] < INDEX_VERSION:
        db.close()
        raise IndexMissing(
            "The address index was built by an older version: "
            "rebuild the road data (appliance routing build)."
        )
    return db


def search(
    data_dir: Path, query: str, near: tuple[float, float] | None = None, limit: int = 10
) -> list[Found]:
    typed = parse(query)
    if not typed.words and not typed.houses:
        return []
    db = open_index(data_dir)
    try:
        words = typed.words
        if words and not _candidates(db, words, [], 1):
            words = _one_typo(db, words)
        houses: list[Row] = []
        apartment = typed.apartment
        for number, house_apartment in typed.houses:
            houses = [r for r in _candidates(db, words, number.split()) if r[4] == number]
            if houses:
                apartment = house_apartment
                break
        others = _candidates(db, words, []) if words else []
    finally:
        db.close()

    def rank(order: dict[str, int]) -> Callable[[Row], tuple[float, ...]]:
        def key(row: Row) -> tuple[float, ...]:
            _, kind, lat, lon, _, score = row
            far = _distance_m(near, (lat, lon)) if near is not None else 0.0
            return (order.get(kind, 9), score, far)

        return key

    # The house first, then the street or place itself (a number the index does not have still
    # places its street: "Abovyan 999").
    ranked = sorted(houses, key=rank(HOUSE_FIRST))
    seen = {(r[0], r[1]) for r in ranked}
    ranked += [r for r in sorted(others, key=rank(STREET_FIRST)) if (r[0], r[1]) not in seen]
    return [
        Found(label, lat, lon, kind, apartment if (label, kind) in seen else None)
        for label, kind, lat, lon, _, _ in ranked[:limit]
    ]


def _candidates(
    db: sqlite3.Connection, words: list[str], numbers: list[str], limit: int = CANDIDATES
) -> list[Row]:
    if not words and not numbers:
        return []
    return db.execute(
        "SELECT e.label, e.kind, e.lat, e.lon, e.number, round(bm25(entry_text), 1) FROM entry_text "
        "JOIN entry e ON e.id = entry_text.rowid WHERE entry_text MATCH ? "
        "ORDER BY bm25(entry_text) LIMIT ?",
        (_match(words, numbers), limit),
    ).fetchall()


def _one_typo(db: sqlite3.Connection, words: list[str]) -> list[str]:
    """The words with each one the index lacks replaced by the index's word one typo away (the
    most frequent such word; the word itself when none is). Words of under four letters are too
    short to guess. One typo is one edit of the folded word, or two in a word of seven letters or
    more: a slip across a digraph ("Msahtots" for "Mashtots", folded "msahtoc" and "mastoc") is
    one key but two letters of the folded form."""
    fixed = []
    for word in words:
        stem = _stem(word)
        if len(word) < 4 or _candidates(db, [word], [], 1):
            fixed.append(word)
            continue
        limit = 2 if len(word) >= 7 else 1
        best: tuple[int, int, str] | None = None  # (edits, -documents, term): fewest edits, then commonest
        for term, docs in db.execute(
            "SELECT term, doc FROM entry_vocab WHERE length(term) BETWEEN ? AND ?",
            (len(stem) - limit, len(word) + 3),
        ):
            # the typed word against the whole word, and (a word being typed) against its start
            edits = min(_edits(word, term, limit), _edits(stem, term[: len(stem)], limit))
            if edits <= limit and (best is None or (edits, -docs) < best[:2]):
                best = (edits, -docs, term)
        fixed.append(best[2] if best else word)
    return fixed


def _edits(a: str, b: str, limit: int) -> int:
    """The letters substituted, inserted, deleted or neighbours swapped from ``a`` to ``b``
    (optimal string alignment), or ``limit + 1`` as soon as it is certain to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        before, row = row, current
    return row[-1]


class Unplaced(Exception):
    """An address the index cannot place (the message says why)."""


def place(data_dir: Path, address: str, near: tuple[float, float] | None = None) -> tuple[float, float]:
    """The point of ``address`` for an order (the import's rows without coordinates): the best
    answer, which must be inside the service area, and a house (or entrance) when the address
    names a number, never only its street."""
    return locate(data_dir, address, near)[:2]  # type: ignore[return-value]


def locate(
    data_dir: Path, address: str, near: tuple[float, float] | None = None
) -> tuple[float, float, str | None]:
    """``place`` with the apartment the address names ("Abovyan 6, kv. 12" → "12"), or None."""
    try:
        found = search(data_dir, address, near, limit=1)
    except IndexMissing as exc:
        raise Unplaced(f"no coordinates, and {str(exc)[0].lower()}{str(exc)[1:]}") from None
    if not found:
        raise Unplaced("the address is not in the address index: give lat and lon")
    best = found[0]
    if parse(address).has_number and best.kind not in ("address", "entrance"):
        raise Unplaced(
            f"the house number is not in the address index (the street: {best.label}): give lat and lon"
        )
    if not in_service_area(best.lat, best.lon):
        raise Unplaced(f"{best.label} is outside the service area")
    return best.lat, best.lon, best.apartment


def company_geocoder(data_dir: Path, company_id: int) -> Callable[[str], tuple[float, float, str | None]]:
    """``locate`` for one company's import: among equal answers, the nearest its default depot."""
    from appliance.dispatch.models import Depot

    depot = Depot.get_or_none((Depot.company == company_id) & Depot.is_default)
    near = (depot.lat, depot.lon) if depot is not None else None
    return lambda address: locate(data_dir, address, near)
