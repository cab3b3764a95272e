"""The per-app container of what the engine's code needs at run time."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from flask import current_app

from appliance.common.health import HealthRegistry
from appliance.engine.chain.registry import Chains
from appliance.engine.custody import Custody
from appliance.settings import Settings

Worker = Callable[[threading.Event], None]


@dataclasses.dataclass
class Runtime:
    settings: Settings
    master_key: bytes
    health: HealthRegistry
    chains: Chains
    custody: Custody | None
    engines: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Background workers started by `appliance serve`: (name, fn(stop_event)); each claims its
    # work from the database so that several processes can run them side by side.
    workers: list[tuple[str, Worker]] = dataclasses.field(default_factory=list)


def runtime() -> Runtime:
    return current_app.extensions["engine"]
