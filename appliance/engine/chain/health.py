"""Readiness probe of a chain: the adapter answers its head block."""

from __future__ import annotations

from appliance.common.health import Check, Probe
from appliance.engine.chain.base import Chain


def chain_probe(chain: Chain) -> Probe:
    def probe() -> Check:
        head = chain.head()
        return Check("pass", data={"head": head.number, "networkId": chain.network_id})

    return probe
