"""Build the address index from an OpenStreetMap extract, in one pass with pyosmium.

Entries (kind):
- ``street``: a named highway, one entry per name and ~5 km cell (a street's ways joined; its
  point is the node of its ways nearest their middle);
- ``address``: every ``addr:housenumber`` (nodes, buildings and multipolygons: the mean of the
  outline), labelled "street number"; its street is ``addr:street`` (or ``addr:place``), else the
  nearest named street, and the street's names in every language are searchable with it;
- ``entrance``: an ``entrance=*`` node with a ``ref`` or house number, labelled with its building's
  address when it has one;
- ``place``: a named ``place=*`` (a district, a square, a neighbourhood).

Every entry is searchable by its names (``name``, ``name:hy``, ``name:ru``, ``name:en``,
``alt_name``, ``old_name``), their Latin transliterations, and its number (names.py). The file is
SQLite: a table of entries, an FTS5 table of their search text and its vocabulary (the words a typo
is matched against), written to a temporary name and renamed into place. ``PRAGMA user_version``
is the index's format (INDEX_VERSION): an index folded by an older version is refused by the search
("rebuild the road data") rather than answering wrongly.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from appliance.dispatch.geocoding.names import search_text, tokens

INDEX_NAME = "addresses.sqlite"
# 2: Armenian folded letter by letter ("ու" is u), the vocabulary table (issue 46)
INDEX_VERSION = 2
NAME_KEYS = ("name", "name:hy", "name:ru", "name:en", "alt_name", "old_name", "official_name")
STREET_CELL = 0.05  # degrees (~5 km): one street entry per name and cell
NEAR_CELL = 0.002  # degrees (~200 m): the grid that finds the nearest street of an address


@dataclass
class _Street:
    names: dict[str, str] = field(default_factory=dict)  # every name key → value
    points: list[tuple[float, float]] = field(default_factory=list)


def _names(tags: dict[str, str]) -> dict[str, str]:
    return {k: tags[k] for k in NAME_KEYS if tags.get(k)}


def _number(number: str) -> str:
    """A house number as the search compares it: its folded words ("12/1 A" → "12 1 a")."""
    return " ".join(tokens(number))


def _label(names: dict[str, str]) -> str:
    return names.get("name") or names.get("name:hy") or next(iter(names.values()))


def _mean(points: Iterable[tuple[float, float]]) -> tuple[float, float] | None:
    pts = list(points)
    if not pts:
        return None
    return sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)


def build_index(pbf: Path, target: Path, progress: Callable[[str], None] = lambda _line: None) -> int:
    """Write the index of ``pbf`` to ``target`` (replaced whole); returns the number of entries."""
    import osmium  # a large extension module: loaded only to build

    streets: dict[tuple[str, int, int], _Street] = {}
    by_name: dict[str, dict[str, str]] = {}  # a street's name (any language) → all its names
    near: dict[tuple[int, int], list[tuple[float, float, str]]] = defaultdict(list)
    addresses: list[tuple[dict[str, str], float, float]] = []
    entrances: list[tuple[dict[str, str], float, float]] = []
    places: list[tuple[dict[str, str], float, float, str]] = []

    # Only what the index reads reaches Python (the filters run in C++: an extract is mostly
    # untagged nodes); areas are assembled only for multipolygons with a house number.
    wanted = ("highway", "addr:housenumber", "place", "entrance")
    processor = (
        osmium.FileProcessor(str(pbf))
        .with_locations()
        .with_areas(osmium.filter.KeyFilter("addr:housenumber"))
        .with_filter(osmium.filter.KeyFilter(*wanted))
    )
    for obj in processor:
        tags = dict(obj.tags)
        if not tags:
            continue
        if isinstance(obj, osmium.osm.Node):
            if not obj.location.valid():
                continue
            point = (obj.location.lat, obj.location.lon)
            if "addr:housenumber" in tags:
                addresses.append((tags, *point))
            if tags.get("entrance") and (tags.get("ref") or tags.get("addr:housenumber")):
                entrances.append((tags, *point))
            if tags.get("place") and _names(tags):
                places.append((tags, *point, "place"))
        elif isinstance(obj, osmium.osm.Way):
            points = [(n.location.lat, n.location.lon) for n in obj.nodes if n.location.valid()]
            if not points:
                continue
            names = _names(tags)
            if tags.get("highway") and names:
                middle = _mean(points)
                assert middle is not None
                key = (_label(names), int(middle[0] // STREET_CELL), int(middle[1] // STREET_CELL))
                joined = streets.setdefault(key, _Street())
                joined.names.update(names)
                joined.points.extend(points)
                for value in names.values():
                    by_name.setdefault(value, {}).update(names)
                for lat, lon in points:
                    near[(int(lat // NEAR_CELL), int(lon // NEAR_CELL))].append((lat, lon, _label(names)))
            if "addr:housenumber" in tags:
                centre = _mean(points[:-1] if len(points) > 1 and points[0] == points[-1] else points)
                if centre is not None:
                    addresses.append((tags, *centre))
        elif isinstance(obj, osmium.osm.Area) and not obj.from_way() and "addr:housenumber" in tags:
            # a multipolygon relation (ways are done above): the mean of its outline
            outline = [(n.lat, n.lon) for ring in obj.outer_rings() for n in ring if n.location.valid()]
            centre = _mean(outline)
            if centre is not None:
                addresses.append((tags, *centre))
    progress(f"address index: {len(streets)} streets, {len(addresses)} house numbers, {len(places)} places")

    def nearest_street(lat: float, lon: float) -> str | None:
        cell = (int(lat // NEAR_CELL), int(lon // NEAR_CELL))
        best: tuple[float, str] | None = None
        for ring in range(0, 4):  # up to ~800 m
            for dy in range(-ring, ring + 1):
                for dx in range(-ring, ring + 1):
                    if max(abs(dy), abs(dx)) != ring:
                        continue
                    for plat, plon, name in near.get((cell[0] + dy, cell[1] + dx), ()):
                        d = (plat - lat) ** 2 + ((plon - lon) * math.cos(math.radians(lat))) ** 2
                        if best is None or d < best[0]:
                            best = (d, name)
            if best is not None:
                return best[1]
        return None

    rows: list[tuple[str, str, float, float, str | None, str]] = []  # label, kind, lat, lon, number, text
    for joined in streets.values():
        middle = _mean(joined.points)
        assert middle is not None
        lat, lon = min(joined.points, key=lambda p: (p[0] - middle[0]) ** 2 + (p[1] - middle[1]) ** 2)
        rows.append((_label(joined.names), "street", lat, lon, None, search_text(*joined.names.values())))

    def address_names(tags: dict[str, str], lat: float, lon: float) -> tuple[str | None, list[str]]:
        street = tags.get("addr:street") or tags.get("addr:place") or nearest_street(lat, lon)
        if street is None:
            return None, []
        variants = by_name.get(street, {})
        return street, [street, *variants.values()]

    for tags, lat, lon in addresses:
        number = tags["addr:housenumber"].strip()
        street, variants = address_names(tags, lat, lon)
        label = f"{street} {number}" if street else number
        rows.append(
            (
                label,
                "address",
                lat,
                lon,
                _number(number),
                search_text(*variants, number, tags.get("addr:housename")),
            )
        )
    for tags, lat, lon in entrances:
        door_number = tags.get("addr:housenumber")
        door_street, variants = address_names(tags, lat, lon) if door_number else (None, [])
        ref = tags.get("ref")
        base = f"{door_street} {door_number}" if door_street and door_number else (door_number or "")
        label = f"{base}, entrance {ref}".strip(", ") if ref else base
        rows.append(
            (
                label,
                "entrance",
                lat,
                lon,
                _number(door_number) if door_number else None,
                search_text(*variants, door_number, ref, "entrance"),
            )
        )
    for tags, lat, lon, kind in places:
        names = _names(tags)
        rows.append((_label(names), kind, lat, lon, None, search_text(*names.values())))

    target = Path(target)
    temp = target.with_name(f".{target.name}.{os.getpid()}")
    temp.unlink(missing_ok=True)
    db = sqlite3.connect(temp)
    try:
        db.executescript(
            """
            CREATE TABLE entry (id INTEGER PRIMARY KEY, label TEXT NOT NULL, kind TEXT NOT NULL,
                                lat REAL NOT NULL, lon REAL NOT NULL, number TEXT);
            CREATE VIRTUAL TABLE entry_text USING fts5(text, tokenize = 'unicode61', prefix = '2 3');
            CREATE VIRTUAL TABLE entry_vocab USING fts5vocab(entry_text, 'row');
            """
        )
        db.executemany(
            "INSERT INTO entry (id, label, kind, lat, lon, number) VALUES (?, ?, ?, ?, ?, ?)",
            (
                (i, label, kind, lat, lon, number)
                for i, (label, kind, lat, lon, number, _) in enumerate(rows, 1)
            ),
        )
        db.executemany(
            "INSERT INTO entry_text (rowid, text) VALUES (?, ?)",
            ((i, row[5]) for i, row in enumerate(rows, 1)),
        )
        db.execute("INSERT INTO entry_text (entry_text) VALUES ('optimize')")
        db.execute(f"PRAGMA user_version = {INDEX_VERSION}")
        db.commit()
    finally:
        db.close()
    os.replace(temp, target)
    return len(rows)
