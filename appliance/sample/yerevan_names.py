"""Make the demo's sample streets read as Yerevan: `python -m appliance.sample.yerevan_names`.

Reads Monaco's road network (tests/data/monaco.osm.pbf, © OpenStreetMap contributors, ODbL 1.0),
moves every node onto the centre of Yerevan (the offset of tests/geo_fixtures.py), and writes
appliance/sample/sample-streets.osm.pbf with:

- Monaco's busiest streets (by number of ways, car roads first) renamed to real Yerevan streets,
  each with ``name`` (Armenian, as Yerevan's map has it), ``name:hy``, ``name:ru``, ``name:en`` and,
  where the street was renamed, ``old_name`` (Mashtots was Lenin Avenue, Abovyan was Astafyan);
- every other name, and Monaco's own addresses, removed (French names read as nowhere);
- house numbers along each renamed street (nodes with ``addr:street`` matching its ``name`` and
  ``addr:housenumber``, odd on one side, even on the other): the geometry's, not Yerevan's real
  houses, so that a dispatcher can type "Abovyan 10" and the import can place it.

The geometry stays Monaco's (ODbL: the file is a derived database, its attribution in README.md);
street names are facts. The result is deterministic: running the script again writes the same
streets and numbers.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TARGET = HERE / "sample-streets.osm.pbf"
SOURCE = HERE.parents[1] / "tests" / "data" / "monaco.osm.pbf"
OFFSET_LAT, OFFSET_LON = -3.55, 37.08
HOUSES_PER_STREET = 24
SIDE = 0.00008  # degrees (~9 m) off the street: odd numbers one side, even the other
FIRST_NEW_ID = 20_000_000_000  # above every id of the source

# (hy, ru, en, old names as {key: value}): real Yerevan streets, Armenian as on the city's signs.
STREETS: list[tuple[str, str, str, dict[str, str]]] = [
    ("Աբովյան փողոց", "улица Абовяна", "Abovyan Street",
     {"old_name": "Աստաֆյան փողոց", "old_name:ru": "Астафьевская улица"}),
    ("Մաշտոցի պողոտա", "проспект Маштоца", "Mashtots Avenue",
     {"old_name": "Լենինի պողոտա", "old_name:ru": "проспект Ленина"}),
    ("Թումանյան փողոց", "улица Туманяна", "Tumanyan Street", {}),
    ("Սայաթ-Նովայի պողոտա", "проспект Саят-Новы", "Sayat-Nova Avenue", {}),
    ("Տերյան փողոց", "улица Теряна", "Teryan Street", {}),
    ("Իսահակյան փողոց", "улица Исаакяна", "Isahakyan Street", {}),
    ("Ամիրյան փողոց", "улица Амиряна", "Amiryan Street", {}),
    ("Կորյունի փողոց", "улица Корюна", "Koryun Street", {}),
    ("Խանջյան փողոց", "улица Ханджяна", "Khanjyan Street", {}),
    ("Նալբանդյան փողոց", "улица Налбандяна", "Nalbandyan Street", {}),
    ("Պուշկինի փողոց", "улица Пушкина", "Pushkin Street", {}),
    ("Մարշալ Բաղրամյան պողոտա", "проспект Маршала Баграмяна", "Marshal Baghramyan Avenue", {}),
    ("Կոմիտասի պողոտա", "проспект Комитаса", "Komitas Avenue", {}),
    ("Արշակունյաց պողոտա", "проспект Аршакуняц", "Arshakunyats Avenue", {}),
    ("Տիգրան Մեծի պողոտա", "проспект Тиграна Меца", "Tigran Mets Avenue", {}),
    ("Վազգեն Սարգսյան փողոց", "улица Вазгена Саргсяна", "Vazgen Sargsyan Street", {}),
    ("Զաքյան փողոց", "улица Закяна", "Zakyan Street", {}),
    ("Արամի փողոց", "улица Арама", "Aram Street", {}),
    ("Բուզանդի փողոց", "улица Бузанда", "Buzand Street", {}),
    ("Մոսկովյան փողոց", "улица Московян", "Moskovyan Street", {}),
    ("Պարոնյան փողոց", "улица Пароняна", "Paronyan Street", {}),
    ("Հանրապետության փողոց", "улица Анрапетутян", "Hanrapetutyan Street", {}),
    ("Մովսես Խորենացու փողոց", "улица Мовсеса Хоренаци", "Movses Khorenatsi Street", {}),
    ("Հովհաննես Քաջազնունու փողոց", "улица Ованеса Каджазнуни", "Hovhannes Kajaznuni Street", {}),
    ("Եզնիկ Կողբացու փողոց", "улица Езника Кохбаци", "Yeznik Koghbatsi Street", {}),
    ("Ղազար Փարպեցու փողոց", "улица Газара Парпеци", "Ghazar Parpetsi Street", {}),
    ("Սարյան փողոց", "улица Сарьяна", "Saryan Street", {}),
    ("Կիևյան փողոց", "улица Киевян", "Kievyan Street", {}),
    ("Գրիգոր Լուսավորչի փողոց", "улица Григора Лусаворича", "Grigor Lusavorich Street", {}),
    ("Վարդանանց փողոց", "улица Вардананц", "Vardanants Street", {}),
    ("Ալեք Մանուկյան փողոց", "улица Алека Манукяна", "Alek Manukyan Street", {}),
    ("Չարենցի փողոց", "улица Чаренца", "Charents Street", {}),
    ("Ազատության պողոտա", "проспект Азатутян", "Azatutyan Avenue", {}),
    ("Հալաբյան փողոց", "улица Алабяна", "Halabyan Street", {}),
    ("Կասյան փողոց", "улица Касьяна", "Kasyan Street", {}),
    ("Պռոշյան փողոց", "улица Прошяна", "Proshyan Street", {}),
    ("Երվանդ Քոչարի փողոց", "улица Ерванда Кочара", "Yervand Kochar Street", {}),
    ("Նար-Դոսի փողոց", "улица Нар-Доса", "Nar-Dos Street", {}),
    ("Հյուսիսային պողոտա", "Северный проспект", "Northern Avenue", {}),
    ("Վաղարշյան փողոց", "улица Вагаршяна", "Vagharshyan Street", {}),
    ("Գաբրիել Սունդուկյան փողոց", "улица Габриэла Сундукяна", "Gabriel Sundukyan Street", {}),
    ("Լեոյի փողոց", "улица Лео", "Leo Street", {}),
]  # fmt: skip
CAR_ROADS = ("primary", "secondary", "tertiary", "residential", "unclassified", "living_street")


def _dropped(key: str) -> bool:
    return key.startswith(("name", "addr:")) or key in ("alt_name", "old_name", "official_name", "loc_name")


def _street_tags(hy: str, ru: str, en: str, old: dict[str, str]) -> dict[str, str]:
    return {"name": hy, "name:hy": hy, "name:ru": ru, "name:en": en, **old}


def rename(source: Path = SOURCE, target: Path = TARGET) -> dict[str, int]:
    """Write ``target`` from Monaco's ``source``; returns {street's Armenian name: houses}."""
    import osmium

    # Pass 1: the named car roads, their ways' points (moved), by Monaco name.
    ways_of: dict[str, list[int]] = defaultdict(list)
    points_of: dict[int, list[tuple[float, float]]] = {}
    road_rank: Counter[str] = Counter()
    # Any: pyosmium's types name a union no loop narrows (the objects here are nodes, ways, relations)
    roads: Any = (
        osmium.FileProcessor(str(source)).with_locations().with_filter(osmium.filter.KeyFilter("highway"))
    )
    for obj in roads:
        if not obj.is_way() or not obj.tags.get("name"):
            continue
        name = obj.tags["name"]
        ways_of[name].append(obj.id)
        points_of[obj.id] = [
            (n.location.lat + OFFSET_LAT, n.location.lon + OFFSET_LON)
            for n in obj.nodes
            if n.location.valid()
        ]
        if obj.tags.get("highway") in CAR_ROADS:
            road_rank[name] += 1
    chosen = sorted(road_rank, key=lambda n: (-road_rank[n], n))[: len(STREETS)]
    yerevan_of = dict(zip(chosen, STREETS, strict=True))

    # The house numbers: along the ways of each street, every second point, alternate sides.
    houses: list[tuple[float, float, str, str]] = []
    counts: dict[str, int] = {}
    for monaco, (hy, _ru, _en, _old) in yerevan_of.items():
        seen: set[tuple[float, float]] = set()
        along = []
        for way_id in sorted(ways_of[monaco]):
            for point in points_of[way_id]:
                if point not in seen:
                    seen.add(point)
                    along.append(point)
        spots = along[::2][:HOUSES_PER_STREET]
        for house, (lat, lon) in enumerate(spots, start=1):
            side = SIDE if house % 2 else -SIDE
            houses.append((lat + side, lon + side, hy, str(house)))
        counts[hy] = len(spots)

    renamed_way: dict[int, dict[str, str]] = {}
    for monaco, street in yerevan_of.items():
        for way_id in ways_of[monaco]:
            renamed_way[way_id] = _street_tags(*street)

    temp = target.with_name(f".tmp-{target.name}")  # the suffix tells osmium the format
    with osmium.SimpleWriter(str(temp), overwrite=True) as writer:
        houses_written = False
        everything: Any = osmium.FileProcessor(str(source))
        for obj in everything:
            if not obj.is_node() and not houses_written:
                for offset, (lat, lon, house_street, number) in enumerate(houses):
                    tags = {"addr:street": house_street, "addr:housenumber": number}
                    writer.add_node(
                        osmium.osm.mutable.Node(id=FIRST_NEW_ID + offset, location=(lon, lat), tags=tags)
                    )
                houses_written = True
            tags = {k: v for k, v in obj.tags if not _dropped(k)}
            if obj.is_way() and obj.id in renamed_way:
                tags.update(renamed_way[obj.id])
            if obj.is_node() and obj.location.valid():
                loc = obj.location
                obj = obj.replace(
                    location=osmium.osm.Location(loc.lon + OFFSET_LON, loc.lat + OFFSET_LAT), tags=tags
                )
            else:
                obj = obj.replace(tags=tags)
            writer.add(obj)
    temp.replace(target)
    return counts


if __name__ == "__main__":
    written = rename(*(Path(a) for a in sys.argv[1:3]))
    print(f"{len(written)} Yerevan streets, {sum(written.values())} house numbers")
