"""`appliance demo`: seed a ready-to-try install. Each area adds its seed step to DEMO_STEPS; a
step is idempotent (running demo twice seeds once) and returns lines telling how to try it."""

from __future__ import annotations

from collections.abc import Callable

from appliance.settings import Settings

DemoStep = Callable[[Settings], list[str]]


def _steps() -> list[DemoStep]:
    return []


def prepare_demo(settings: Settings) -> list[str]:
    lines: list[str] = []
    for step in _steps():
        lines.extend(step(settings))
    return lines
