"""What reading an uploaded .xlsx in a child process costs (issue 41): for workbooks of 1, 2,000 and
10,000 order rows, the median time of sheets.read_rows (the parent's checks, a fresh interpreter,
calamine there, the rows back as JSON) against calamine in this process, and the child's peak
memory; then the same for the largest workbook an upload can be (5 MB of varied text, every row
of the limit) against the child's address-space limit.

    python bench/orders/workbook_reader.py [--runs 7]
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import statistics
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from openpyxl import Workbook  # noqa: E402
from python_calamine import CalamineWorkbook  # noqa: E402

from appliance.dispatch.orders import sheets, workbook_process  # noqa: E402

HEADER = ["externalRef", "recipientName", "recipientPhone", "amountAmd", "addressLabelHy", "lat", "lon"]


def workbook(rows: list[list[object]]) -> bytes:
    book = Workbook()
    sheet = book.active
    for values in rows:
        sheet.append(values)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def orders(count: int) -> bytes:
    return workbook(
        [HEADER]
        + [[f"SHOP-{n}", f"Recipient {n}", f"091 {100000 + n}", 1000 + n, f"Աբովյան {n}", 40.18, 44.51] for n in range(count)]
    )  # fmt: skip


def largest(rng: random.Random) -> bytes:
    """10,000 rows of 24 columns of varied text, as long as fits in an upload's 5 MB."""
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(4000)]
    previous = b""
    for count in (2, 4, 8, 16, 32):  # words per cell
        rows = [[f"c{c}" for c in range(24)]]
        rows += [[" ".join(rng.choices(words, k=count)) for _ in range(24)] for _ in range(sheets.MAX_ROWS)]
        data = workbook(rows)
        if len(data) > sheets.MAX_BYTES:
            break
        previous = data
    return previous


def in_process(data: bytes) -> list[list[object]]:
    book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    try:
        return list(book.get_sheet_by_index(0).iter_rows())
    finally:
        book.close()


def median_ms(action, data: bytes, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action(data)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def child_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(
        f"{'rows':>7} {'file KB':>8} {'in process ms':>14} {'child ms':>9} {'extra ms':>9} {'child peak MB':>14}"
    )
    for count in (1, 2_000, 10_000):
        data = orders(count)
        assert sheets.read_rows(data) == in_process(data)
        inside = median_ms(in_process, data, args.runs)
        child = median_ms(sheets.read_rows, data, args.runs)
        print(
            f"{count:>7,} {len(data) / 1024:>8.0f} {inside:>14.1f} {child:>9.1f} {child - inside:>9.1f} "
            f"{child_peak_mb():>14.0f}"
        )
    data = largest(random.Random(41))
    start = time.perf_counter()
    rows = sheets.read_rows(data)
    took = time.perf_counter() - start
    print(
        f"largest upload: {len(data) / 1e6:.1f} MB, {len(rows) - 1:,} rows of {len(rows[0])} columns, "
        f"{sum(len(str(c)) for r in rows for c in r) / 1e6:.0f} M characters: {took:.1f} s, child peak "
        f"{child_peak_mb():.0f} MB (limit {workbook_process.MEMORY_BYTES // 2**20} MB of address space)"
    )


if __name__ == "__main__":
    main()
