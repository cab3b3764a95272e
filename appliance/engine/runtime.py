"""The payout engine's run-time objects: the shared Runtime fields plus its engines, each built
once in create_app (appliance/engine/app.py)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

from appliance.common.runtime import Runtime

if TYPE_CHECKING:
    from appliance.engine.chain.registry import Chains
    from appliance.engine.custody import CustodyKeys


@dataclasses.dataclass(kw_only=True)
class EngineRuntime(Runtime):
    SERVICE: ClassVar[str] = "engine"

    chains: Chains
    # None without a custody key: the engine still serves; payouts wait and deposit addresses 503.
    custody: CustodyKeys | None


def runtime() -> EngineRuntime:
    return EngineRuntime.current()
