"""Bundled read-only assets (static/): next to the package in a checkout, inside the bundle when
frozen by PyInstaller (sys._MEIPASS)."""

from __future__ import annotations

import sys
from pathlib import Path


def static_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "static"
    return Path(__file__).resolve().parents[2] / "static"
