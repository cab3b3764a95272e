"""`make test` ends with one line per group of skipped tests naming why (tests/conftest.py's
pytest_terminal_summary), run here on a small suite of its own, in one process and under xdist
as `make test` runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
import pytest

@pytest.mark.skip(reason="chromium not found")
def test_one(): pass

@pytest.mark.skip(reason="chromium not found")
def test_two(): pass

def test_three(): pytest.skip("tilemaker not found")

def test_four(): pass
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_the_summary_names_each_group_of_skipped_tests_and_why(tmp_path: Path, workers: list[str]) -> None:
    (tmp_path / "test_sample.py").write_text(SUITE)
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", "/dev/null",
            "--rootdir", str(tmp_path), *workers, str(tmp_path / "test_sample.py"),
        ],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    summary = lines[lines.index(next(line for line in lines if "skipped tests, by reason" in line)) + 1 :]
    assert summary[:2] == [
        "2 tests skipped: chromium not found (test_sample.py)",
        "1 test skipped: tilemaker not found (test_sample.py)",
    ]
    assert "1 passed, 3 skipped" in summary[2]
