"""Tracking links in one place (tracking/links.py, issue 45): one rule for a live link, one way to
issue one, and no other module that creates a link or judges its liveness by itself."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from appliance.common import clock
from appliance.dispatch.tracking.links import is_live

APPLIANCE = Path(__file__).resolve().parents[2] / "appliance"


def test_a_link_is_live_until_it_is_revoked_or_its_expiry_is_reached() -> None:
    now = clock.now()
    assert is_live(None, now + timedelta(seconds=1), at=now)
    assert not is_live(None, now, at=now)  # the moment it expires it is over
    assert not is_live(now, now + timedelta(hours=1), at=now)
    assert not is_live(None, None, at=now)


def test_a_link_about_to_expire_is_not_live_for_a_margin() -> None:
    now = clock.now()
    assert is_live(None, now + timedelta(hours=2), at=now, margin=timedelta(hours=1))
    assert not is_live(None, now + timedelta(minutes=59), at=now, margin=timedelta(hours=1))


def test_no_module_but_links_creates_a_tracking_link_or_compares_its_expiry() -> None:
    own = APPLIANCE / "dispatch" / "tracking" / "links.py"
    creating = re.compile(r"TrackingLink\.create\(|TrackingLink\.update\(")
    judging = re.compile(r"(expires_at|revoked_at)\s*(<=|>=|<|>|is not None|is None)")
    offenders = []
    for path in APPLIANCE.rglob("*.py"):
        text = path.read_text()
        if path == own or "TrackingLink" not in text:
            continue
        if creating.search(text):
            offenders.append(f"{path}: creates or revokes a tracking link")
        offenders += [f"{path}: {line.strip()}" for line in text.splitlines() if judging.search(line)]
    assert offenders == []
