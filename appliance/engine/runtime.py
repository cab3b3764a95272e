"""The per-app container of what the engine's code needs at run time."""

from __future__ import annotations

import dataclasses
from typing import Any

from flask import current_app

from appliance.common.health import HealthRegistry
from appliance.settings import Settings


@dataclasses.dataclass
class Runtime:
    settings: Settings
    master_key: bytes
    health: HealthRegistry
    engines: dict[str, Any] = dataclasses.field(default_factory=dict)


def runtime() -> Runtime:
    return current_app.extensions["engine"]
