"""The disk check's floor is sized from the write rate as well as fixed (issue 32)."""

from __future__ import annotations

import shutil
from collections import namedtuple

import pytest

from appliance.common import health
from appliance.common.disk_floor import MB, FreeSpaceTrend, floor_mb

Usage = namedtuple("Usage", "total used free")


def test_the_trend_gives_no_rate_until_it_has_a_minute_of_history() -> None:
    trend = FreeSpaceTrend()
    assert trend.observe(0.0, 1000 * MB) is None
    assert trend.observe(30.0, 900 * MB) is None
    assert trend.observe(60.0, 800 * MB) == pytest.approx(200 * MB / 60)


def test_the_rate_is_the_fall_across_the_last_ten_minutes_and_never_negative() -> None:
    trend = FreeSpaceTrend()
    for second in range(0, 1201, 5):  # twenty minutes losing 1 MB a second, then a steady disk
        trend.observe(float(second), (5000 - min(second, 600)) * MB)
    assert trend.observe(1205.0, 4400 * MB) == 0.0  # the fall is older than the window
    trend.observe(1300.0, 4900 * MB)  # space freed
    assert trend.observe(1310.0, 4900 * MB) == 0.0


def test_samples_closer_than_five_seconds_are_not_kept() -> None:
    trend = FreeSpaceTrend()
    trend.observe(0.0, 1000 * MB)
    for tick in range(1, 100):
        trend.observe(tick / 100, 1000 * MB)
    assert len(trend._samples) == 1


def test_the_floor_is_the_larger_of_the_fixed_floor_and_the_headroom_at_the_rate() -> None:
    assert floor_mb(128, 30, None) == 128
    assert floor_mb(128, 30, 0.0) == 128
    assert floor_mb(128, 0, 10 * MB) == 128  # the rate part off
    assert floor_mb(128, 30, MB / 60) == 128  # 1 MB a minute: 30 MB, below the fixed floor
    assert floor_mb(128, 30, 20 * MB / 60) == 600  # 20 MB a minute: half an hour is 600 MB


def test_the_disk_check_fails_above_the_fixed_floor_when_the_disk_fills_fast(monkeypatch, tmp_path) -> None:
    now = [0.0]
    free = [2000 * MB]
    monkeypatch.setattr(health, "monotonic", lambda: now[0])
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10_000 * MB, 0, free[0]))
    probe = health.disk_probe(tmp_path, 128, 30)

    first = probe()
    assert first.status == "pass" and first.data == {"freeMb": 2000, "minFreeMb": 128}
    # 20 MB a minute for two minutes: 1960 MB left is more than half an hour of it (600 MB).
    for _ in range(24):
        now[0] += 5
        free[0] -= 20 * MB // 12
    steady = probe()
    assert steady.status == "pass"
    assert steady.data["minFreeMb"] == 600 and steady.data["fillMbPerMinute"] == pytest.approx(20.0)

    free[0] = 590 * MB  # far above 128 MB, but under thirty minutes at this rate
    now[0] += 5
    failing = probe()
    assert failing.status == "fail"
    assert "30 minutes of writes" in failing.detail and failing.data["freeMb"] == 590


def test_without_headroom_the_disk_check_keeps_the_fixed_floor(monkeypatch, tmp_path) -> None:
    now = [0.0]
    free = [2000 * MB]
    monkeypatch.setattr(health, "monotonic", lambda: now[0])
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10_000 * MB, 0, free[0]))
    probe = health.disk_probe(tmp_path, 128, 0)
    probe()
    now[0], free[0] = 120.0, 200 * MB
    assert probe().status == "pass"
    free[0] = 100 * MB
    now[0] = 125.0
    failing = probe()
    assert failing.status == "fail" and "below min_free_disk_mb (128 MB)" in failing.detail
