"""Address search benchmark: builds the address index of the demo's sample streets (the
OpenStreetMap extract `routing build` reads) and times queries as GET /geo/search runs them
(the search function, one read-only SQLite open per query, as the route does): every house of
the sample by its street and number, the same in Latin letters, and street prefixes.

    python bench/geo_search/run.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import osmium  # noqa: E402
from anyascii import anyascii  # noqa: E402
from support import percentile  # noqa: E402

from appliance.dispatch.geocoding.build import INDEX_NAME, build_index  # noqa: E402
from appliance.dispatch.geocoding.search import search  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "appliance" / "sample" / "sample-streets.osm.pbf"
NEAR = (40.18, 44.51)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root)
        (data_dir / "routing" / "current").mkdir(parents=True)
        started = time.perf_counter()
        entries = build_index(SAMPLE, data_dir / "routing" / "current" / INDEX_NAME)
        print(f"index of {SAMPLE.name}: {entries} entries in {time.perf_counter() - started:.1f} s")
        queries: list[str] = []
        for obj in osmium.FileProcessor(str(SAMPLE)).with_filter(osmium.filter.KeyFilter("addr:street")):
            tags = dict(obj.tags)
            if "addr:housenumber" in tags:
                text = f"{tags['addr:street']} {tags['addr:housenumber']}"
                queries += [text, anyascii(text).lower()]
        queries += ["Boul", "Avenue de", "Monte", "Rue", "Quai", "verdun", "princesse grace"]
        times: list[float] = []
        found = 0
        for _ in range(args.rounds):
            for query in queries:
                t = time.perf_counter()
                found += bool(search(data_dir, query, NEAR))
                times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(
            f"{len(times)} queries ({len(queries)} distinct, {found} answered): "
            f"p50 {percentile(times, 0.5):.2f} ms, p99 {percentile(times, 0.99):.2f} ms, max {times[-1]:.2f} ms"
        )


if __name__ == "__main__":
    main()
