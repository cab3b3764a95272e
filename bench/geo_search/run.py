"""Address search benchmark: builds the address index of the demo's Yerevan-named sample streets
(appliance/sample/yerevan_names.py; the OpenStreetMap extract `routing build` reads) and times
queries as GET /geo/search runs them (the search function, one read-only SQLite open per query, as
the route does): every house of the sample typed five ways (Armenian, Russian, ALA-LC, BGN/PCGN,
everyday Latin: tests/yerevan_spellings.py), with and without the street word, bare and with an
apartment, and street prefixes as they are typed; then Armenian and Latin with one typo (two
letters swapped in the street's longest word). Prints the found rate per spelling (the house
first, with the apartment typed) and the latency; asserts nothing (the 95 % floor is a test:
tests/dispatch/test_yerevan_address_search.py).

    python bench/geo_search/run.py [--rounds 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import osmium  # noqa: E402
from support import percentile  # noqa: E402

from appliance.dispatch.geocoding.build import INDEX_NAME, build_index  # noqa: E402
from appliance.dispatch.geocoding.search import search  # noqa: E402
from appliance.sample.yerevan_names import STREETS, TARGET  # noqa: E402
from tests.yerevan_spellings import typed_ways  # noqa: E402

NEAR = (40.18, 44.51)
PREFIXES = ["Abov", "Աբով", "Абов", "Mash", "Маш", "Tuman", "Թում", "Sayat", "Komi", "Tigran M"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    names = {hy: (hy, ru, en) for hy, ru, en, _ in STREETS}
    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root)
        (data_dir / "routing" / "current").mkdir(parents=True)
        started = time.perf_counter()
        entries = build_index(TARGET, data_dir / "routing" / "current" / INDEX_NAME)
        print(f"index of {TARGET.name}: {entries} entries in {time.perf_counter() - started:.1f} s")
        queries: list[tuple[str, str, str, str | None]] = []  # way, query, expected label, apartment
        for obj in osmium.FileProcessor(str(TARGET)).with_filter(osmium.filter.KeyFilter("addr:street")):
            street, number = obj.tags["addr:street"], obj.tags["addr:housenumber"]
            for way, query, apartment in typed_ways(*names[street], number):
                queries.append((way, query, f"{street} {number}", apartment))
        asked: Counter[str] = Counter()
        found: Counter[str] = Counter()
        times: list[float] = []
        for _ in range(args.rounds):
            for way, query, label, apartment in queries:
                t = time.perf_counter()
                first = search(data_dir, query, NEAR, limit=10)
                times.append((time.perf_counter() - t) * 1000)
                asked[way] += 1
                found[way] += bool(first) and first[0].label == label and first[0].apartment == apartment
            for prefix in PREFIXES:
                t = time.perf_counter()
                search(data_dir, prefix, NEAR, limit=10)
                times.append((time.perf_counter() - t) * 1000)
        # One typo in the street (two neighbouring letters of its longest word swapped), bare queries.
        typo_times: list[float] = []
        for way, query, label, apartment in queries:
            if apartment is not None or way not in ("hy", "Latin"):
                continue
            words = query.split()
            longest = max(range(len(words) - 1), key=lambda i: len(words[i]))
            word = words[longest]
            if len(word) < 5:
                continue
            words[longest] = word[0] + word[2] + word[1] + word[3:]
            t = time.perf_counter()
            first = search(data_dir, " ".join(words), NEAR, limit=1)
            typo_times.append((time.perf_counter() - t) * 1000)
            asked[f"{way}+typo"] += 1
            found[f"{way}+typo"] += bool(first) and first[0].label == label
        for way in asked:
            print(f"  {way:10} {found[way]}/{asked[way]} found first ({100 * found[way] / asked[way]:.1f} %)")
        total = sum(found[w] for w in asked if "+" not in w) / sum(asked[w] for w in asked if "+" not in w)
        times.sort()
        print(
            f"{len(times)} queries, {100 * total:.1f} % found first: "
            f"p50 {percentile(times, 0.5):.2f} ms, p95 {percentile(times, 0.95):.2f} ms, "
            f"p99 {percentile(times, 0.99):.2f} ms, max {times[-1]:.2f} ms"
        )
        typo_times.sort()
        print(
            f"{len(typo_times)} queries with a typo: p50 {percentile(typo_times, 0.5):.2f} ms, "
            f"p95 {percentile(typo_times, 0.95):.2f} ms"
        )


if __name__ == "__main__":
    main()
