"""Searching the address index (build.py): the query is folded as the index was (names.py), every
word must match (the last as a prefix, as one types), and the answers are ranked best first:

1. an address or entrance whose house number is a word of the query, exactly;
2. houses first when the query names a number, else streets and places first;
3. FTS5's bm25 rank of the text;
4. the distance from ``near`` (the depot, the map's centre), when given.

A query whose house number the index does not have answers its street (the number's word left
out), so "Abovyan 999" still places the street. The index is opened read-only per search: a
routing build that swaps the road data in swaps the index with it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from appliance.dispatch.geo_types import in_service_area
from appliance.dispatch.geocoding.build import INDEX_NAME
from appliance.dispatch.geocoding.names import tokens
from appliance.dispatch.routing.build import routing_dir

CANDIDATES = 200  # read by rank, then re-ranked
HOUSE_FIRST = {"address": 0, "entrance": 1, "street": 2, "place": 3}
STREET_FIRST = {"street": 0, "place": 1, "address": 2, "entrance": 3}


class IndexMissing(Exception):
    """No address index: the road data was not built (or built by a version without one)."""


@dataclass(frozen=True)
class Found:
    label: str
    lat: float
    lon: float
    kind: str

    def body(self) -> dict[str, object]:
        return {"label": self.label, "lat": self.lat, "lon": self.lon, "kind": self.kind}


def index_file(data_dir: Path) -> Path:
    return routing_dir(Path(data_dir)) / "current" / INDEX_NAME


def _match(words: list[str]) -> str:
    # Each word quoted (FTS5 syntax in a query is text, never an operator); the last one a prefix.
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " AND ".join(quoted)


def _distance_m(a: tuple[float, float], b: tuple[float, float]) -> float:
    dlat = math.radians(b[0] - a[0])
    dlon = math.radians(b[1] - a[1]) * math.cos(math.radians((a[0] + b[0]) / 2))
    return 6_371_000 * math.hypot(dlat, dlon)


def search(
    data_dir: Path, query: str, near: tuple[float, float] | None = None, limit: int = 10
) -> list[Found]:
    path = index_file(data_dir)
    if not path.is_file():
        raise IndexMissing("No address index: build the road data (appliance routing build).")
    words = tokens(query)
    if not words:
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = _candidates(db, words)
        numbers = {w for w in words if any(c.isdigit() for c in w)}
        fell_back = not rows and bool(numbers)
        if fell_back:  # a house number the index does not have: its street
            rows = _candidates(db, [w for w in words if w not in numbers])
    finally:
        db.close()

    # A query naming a house number wants houses first; one naming none (or whose number the
    # index does not have) wants the street or place itself.
    order = HOUSE_FIRST if numbers and not fell_back else STREET_FIRST

    def rank(row: tuple[str, str, float, float, str | None, float]) -> tuple[float, ...]:
        _, kind, lat, lon, number, score = row
        parts = set(number.split()) if number else set()
        exact = 0 if parts and parts <= set(words) and parts & numbers else 1
        far = _distance_m(near, (lat, lon)) if near is not None else 0.0
        return (exact, order.get(kind, 9), score, far)

    ranked = sorted(rows, key=rank)[:limit]
    return [Found(label, lat, lon, kind) for label, kind, lat, lon, _, _ in ranked]


def _candidates(
    db: sqlite3.Connection, words: list[str]
) -> list[tuple[str, str, float, float, str | None, float]]:
    if not words:
        return []
    return db.execute(
        "SELECT e.label, e.kind, e.lat, e.lon, e.number, round(bm25(entry_text), 1) FROM entry_text "
        "JOIN entry e ON e.id = entry_text.rowid WHERE entry_text MATCH ? "
        "ORDER BY bm25(entry_text) LIMIT ?",
        (_match(words), CANDIDATES),
    ).fetchall()


class Unplaced(Exception):
    """An address the index cannot place (the message says why)."""


def place(data_dir: Path, address: str, near: tuple[float, float] | None = None) -> tuple[float, float]:
    """The point of ``address`` for an order (the import's rows without coordinates): the best
    answer, which must be inside the service area, and a house (or entrance) when the address
    names a number, never only its street."""
    try:
        found = search(data_dir, address, near, limit=1)
    except IndexMissing as exc:
        raise Unplaced(f"no coordinates, and {str(exc)[0].lower()}{str(exc)[1:]}") from None
    if not found:
        raise Unplaced("the address is not in the address index: give lat and lon")
    best = found[0]
    if any(c.isdigit() for c in address) and best.kind not in ("address", "entrance"):
        raise Unplaced(
            f"the house number is not in the address index (the street: {best.label}): give lat and lon"
        )
    if not in_service_area(best.lat, best.lon):
        raise Unplaced(f"{best.label} is outside the service area")
    return best.lat, best.lon


def company_geocoder(data_dir: Path, company_id: int) -> Callable[[str], tuple[float, float]]:
    """``place`` for one company's import: among equal answers, the nearest its default depot."""
    from appliance.dispatch.models import Depot

    depot = Depot.get_or_none((Depot.company == company_id) & Depot.is_default)
    near = (depot.lat, depot.lon) if depot is not None else None
    return lambda address: place(data_dir, address, near)
