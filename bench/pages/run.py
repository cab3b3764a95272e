"""The pages as a phone gets them (issue 49): Lighthouse (npm, pinned; `make bench-pages-setup`
installs it into .tools/lighthouse, `make test` never does) on the demo's tracking page, day board,
courier run and console sign-in, each cold, mobile (Lighthouse's default: simulated slow 4G, 4x CPU),
with Debian's Chromium; then the tracking page on Lighthouse's 3G profile (mobileRegular3G, applied
by DevTools) and the time the arrival estimate is painted there.

    python bench/pages/run.py [--runs 1]

Prints a table of the scores and metrics (performance, accessibility, FCP, LCP, TBT, CLS) and the
3G line; with several runs, each page's median too. `--pages tracking,board` runs only those
(tracking, board, courier, signin, tracking3g, eta3g); `--save DIR` keeps each report's JSON. Without node or Lighthouse installed it says so and exits 0 (`make bench` runs every
bench). One machine's figures: a loaded machine inflates TBT (Lighthouse scales what it observes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

from support import free_port  # noqa: E402

PREFIX = Path(os.environ.get("LIGHTHOUSE_PREFIX") or ROOT / ".tools" / "lighthouse")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
OWNER = ("owner@demo.am", "demo-owner-pass")
COURIER = ("courier1@demo.am", "demo-courier-1")


def _demo(data_dir: Path, port: int) -> tuple[subprocess.Popen[str], str]:
    """`appliance demo` (dispatch only) on a fresh data directory; the tracking page's path."""
    command = [sys.executable, "-m", "appliance", "demo", "--only", "dispatch", "--processes", "1"]
    process = subprocess.Popen(
        [*command, "--data-dir", str(data_dir), "--dispatch-port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    tracking = None
    deadline = time.monotonic() + 300
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"Tracking page of an order on its way: (\S+)", line)
        if found:
            tracking = found.group(1)
        if "dispatch listening on" in line:
            break
        if time.monotonic() > deadline:
            break
    if tracking is None:
        process.terminate()
        raise SystemExit("the demo did not print its tracking page")
    # Drain the server's log in the background: a full pipe would block it.
    threading.Thread(target=lambda: process.stdout and process.stdout.read(), daemon=True).start()
    return process, "/" + tracking.split("/", 3)[3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="Lighthouse passes over the pages")
    parser.add_argument("--pages", default="", help="a comma-separated subset (default: all)")
    parser.add_argument("--save", default="", help="a folder to keep each Lighthouse report (JSON) in")
    options = parser.parse_args()
    node = shutil.which("node")
    if node is None or not (PREFIX / "node_modules" / "lighthouse").is_dir():
        print("bench/pages: Lighthouse is not installed; `make bench-pages-setup` installs it (needs npm)")
        return 0
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bench-pages-") as scratch:
        process, tracking = _demo(Path(scratch) / "data", port)
        try:
            time.sleep(3)  # the demo moves its order on its way once serving
            rows = []
            for _ in range(options.runs):
                arguments = {
                    "base": f"http://127.0.0.1:{port}",
                    "tracking": tracking,
                    "owner": OWNER,
                    "courier": COURIER,
                    "only": [name for name in options.pages.split(",") if name],
                    "save": str(Path(options.save).resolve()) if options.save else "",
                }
                result = subprocess.run(
                    [node, str(HERE / "lighthouse.mjs"), json.dumps(arguments)],
                    env={**os.environ, "LIGHTHOUSE_PREFIX": str(PREFIX), "CHROMIUM": CHROMIUM},
                    capture_output=True,
                    text=True,
                    timeout=1200,
                    check=False,
                )
                if result.returncode != 0:
                    print(result.stdout + result.stderr)
                    return 1
                rows += [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        finally:
            process.terminate()
            process.wait(30)
    print(f"{'page':<18} {'perf':>4} {'a11y':>4} {'FCP ms':>7} {'LCP ms':>7} {'TBT ms':>7} {'CLS':>6}")
    for row in [row for row in rows if "performance" in row]:
        cells = [row.get(key) for key in ("performance", "accessibility", "fcpMs", "lcpMs", "tbtMs")]
        shown = [("-" if cell is None else str(cell)) for cell in cells]
        cls = "-" if row.get("cls") is None else f"{row['cls']:.3f}"
        print(
            f"{row['name']:<18} {shown[0]:>4} {shown[1]:>4} {shown[2]:>7} {shown[3]:>7} {shown[4]:>7} {cls:>6}"
            + (f"  ({row['runtimeError']})" if row.get("runtimeError") else "")
            + (f"  (accessibility: {', '.join(row['a11yFailed'])})" if row.get("a11yFailed") else "")
        )
    for row in rows:
        if "etaPaintedMs" in row:
            print(
                f"3G (Lighthouse's mobileRegular3G, DevTools): the arrival estimate "
                f"({row['etaText']!r}) painted {row['etaPaintedMs']} ms after the navigation began"
            )
    if options.runs > 1:
        _medians(rows, options.runs)
    return 0


def _medians(rows: list[dict], runs: int) -> None:
    """Each page's median over the runs (each column on its own)."""
    print(f"\nmedian of {runs} runs")
    names = list(dict.fromkeys(row["name"] for row in rows))
    keys = ("performance", "accessibility", "fcpMs", "lcpMs", "tbtMs", "cls", "etaPaintedMs")
    for name in names:
        cells = []
        for key in keys:
            values = [row[key] for row in rows if row["name"] == name and row.get(key) is not None]
            if values:
                middle = statistics.median(values)
                cells.append(f"{key} {middle:.3f}" if key == "cls" else f"{key} {round(middle)}")
        print(f"{name:<18} " + ", ".join(cells))


if __name__ == "__main__":
    raise SystemExit(main())
