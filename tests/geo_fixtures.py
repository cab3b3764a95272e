"""Real road data for tests: Monaco's extract moved onto Yerevan, and road data built from it.

The translation keeps every way, turn restriction and one-way street; only node positions move
by a fixed offset so that the roads lie inside the dispatch service area.
"""

from __future__ import annotations

from pathlib import Path

import osmium

DATA = Path(__file__).resolve().parent / "data"
OFFSET_LAT, OFFSET_LON = -3.55, 37.08
# Two points on Monaco's roads, moved onto Yerevan.
ROAD_A = (43.72956 + OFFSET_LAT, 7.41337 + OFFSET_LON)
ROAD_B = (43.73977 + OFFSET_LAT, 7.42546 + OFFSET_LON)
ROAD_C = (43.73380 + OFFSET_LAT, 7.41870 + OFFSET_LON)


def translate_extract(source: Path, target: Path) -> Path:
    with osmium.SimpleWriter(str(target), overwrite=True) as writer:
        for obj in osmium.FileProcessor(str(source)):
            if obj.is_node() and obj.location.valid():
                loc = obj.location
                obj = obj.replace(location=osmium.osm.Location(loc.lon + OFFSET_LON, loc.lat + OFFSET_LAT))
            writer.add(obj)
    return target
