"""What the engine's OpenAPI document says beyond its route models: the deployment's offer.

The patterns of the specification admit any well-formed asset code and chain id, but a payout or a
deposit address is only accepted for what this deployment offers (400 otherwise). The document
names those values, so that a client, and the contract tests' generated requests, use real ones.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from appliance.engine.chain.registry import Chains

# An address of the shape every offered chain (EVM) takes, as an example of a payout destination.
EXAMPLE_DESTINATION = "0x000000000000000000000000000000000000dEaD"


def describe_offer(document: dict[str, Any], chains: Chains) -> dict[str, Any]:
    schemas = document["components"]["schemas"]
    codes = Counter(asset.code for asset in chains.assets)
    payable = sorted(code for code, count in codes.items() if count == 1)
    chain_ids = sorted({asset.chain_id for asset in chains.assets})
    _restrict(schemas.get("PayoutSubmit"), "asset", payable, "an asset code offered on exactly one chain")
    _restrict(schemas.get("DepositAddressRequest"), "chainId", chain_ids, "a chain of this deployment")
    destination = (schemas.get("PayoutSubmit") or {}).get("properties", {}).get("destination")
    if destination is not None:
        destination["examples"] = [EXAMPLE_DESTINATION]
    return document


def _restrict(schema: dict[str, Any] | None, field: str, values: list[str], what: str) -> None:
    prop = (schema or {}).get("properties", {}).get(field)
    if prop is None or not values:
        return
    prop["enum"] = values
    prop["description"] = f"{what} (GET /v1/assets lists them); any other is refused with 400"
