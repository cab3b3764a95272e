"""The per-app container of what the dispatch service's code needs at run time (settings, keys,
engines), kept on the Flask app so that nothing is read at import time."""

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
    # Engines that later areas attach (routing, solver, objects, mail, tiles…), by name.
    engines: dict[str, Any] = dataclasses.field(default_factory=dict)


def runtime() -> Runtime:
    return current_app.extensions["dispatch"]
