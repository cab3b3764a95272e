"""The deployment's chains and assets, built once from the settings.

The embedded chain ``eth_local`` (networkId 1337, ETH and USDC) is there unless ``local_chain`` is
off; every ``[[chains]]`` table adds a JSON-RPC chain. An asset entry is the spec's Asset entry.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from pathlib import Path
from typing import Any

from eth_utils import keccak

from appliance.common.problems import BadRequest
from appliance.engine.chain.base import Chain
from appliance.settings import AssetConfig, Settings

log = logging.getLogger("appliance.engine.chain")

LOCAL_CHAIN_ID = "eth_local"
LOCAL_NETWORK_ID = 1337
MAX_UINT256 = 2**256 - 1


@dataclasses.dataclass(frozen=True)
class Asset:
    chain_id: str
    code: str
    kind: str  # native | ERC20
    decimals: int
    confirmations: int
    contract: str | None
    network_id: int
    environment: str
    low_balance_minor: int | None = None  # the treasury's low-balance alarm (not in the spec's entry)
    sweep_min_minor: int | None = None  # swept above this (None: above the sweep's own fee)

    @property
    def asset_id(self) -> str:
        return f"{self.chain_id}:{self.code}"

    def entry(self) -> dict[str, Any]:
        """The spec's Asset entry."""
        return {
            "assetId": self.asset_id,
            "assetCode": self.code,
            "chainId": self.chain_id,
            "kind": self.kind,
            "contract": self.contract,
            "decimals": self.decimals,
            "networkId": self.network_id,
            "confirmations": self.confirmations,
            "environment": self.environment,
        }


class Chains:
    def __init__(self, chains: dict[str, Chain], assets: list[Asset]) -> None:
        self.chains = chains
        self.assets = assets

    def get(self, chain_id: str) -> Chain | None:
        return self.chains.get(chain_id)

    def assets_of(self, chain_id: str) -> list[Asset]:
        return [a for a in self.assets if a.chain_id == chain_id]

    def native_or_none(self, chain_id: str) -> Asset | None:
        """The chain's native asset, or None for a chain configured with token assets only."""
        return next((a for a in self.assets if a.chain_id == chain_id and a.kind == "native"), None)

    def native(self, chain_id: str) -> Asset:
        """The chain's native asset; a LookupError (never a bare StopIteration, which a caller's
        generator would turn into something else) when the chain has none configured."""
        asset = self.native_or_none(chain_id)
        if asset is None:
            raise LookupError(f"chain {chain_id} has no native asset configured")
        return asset

    def find(self, chain_id: str, code: str) -> Asset | None:
        return next((a for a in self.assets if a.chain_id == chain_id and a.code == code), None)

    def resolve_payout_asset(self, code: str) -> Asset:
        """The one asset entry a payout's ``asset`` names; 400 when none or several do."""
        matches = [a for a in self.assets if a.code == code]
        if not matches:
            raise BadRequest(
                f"Asset {code} is not offered by this deployment (GET /v1/assets lists the offered assets).",
                errors=[{"field": "asset", "message": "unsupported asset"}],
            )
        if len(matches) > 1:
            raise BadRequest(
                f"Asset {code} is offered on several chains ({', '.join(a.chain_id for a in matches)}); "
                "this deployment cannot choose one for a payout.",
                errors=[{"field": "asset", "message": "ambiguous asset"}],
            )
        asset = matches[0]
        if self.native_or_none(asset.chain_id) is None:
            # The gas of a token transfer is paid in the chain's native asset, which this chain
            # does not configure: the payout could never be signed. Deposits are still watched.
            raise BadRequest(
                f"Asset {code} cannot be paid out: chain {asset.chain_id} has no native asset "
                "configured to pay the network fee.",
                errors=[{"field": "asset", "message": "no native asset on its chain for the fee"}],
            )
        return asset

    def close(self) -> None:
        for chain in self.chains.values():
            close = getattr(chain, "close", None)
            if close is not None:
                close()


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
_UPPER_NIBBLES = frozenset("89abcdef")


@functools.lru_cache(maxsize=4096)
def eip55(address: str) -> str:
    """The EIP-55 spelling of a 0x address: a letter is upper case where the same hex digit of
    keccak256(the lower-case address) is 8 or more. eth_utils' to_checksum_address gives the same
    (a test checks) with validation this path has done already, at four times the cost of every
    payout submission. Kept for the last few thousand addresses: an operator pays the same
    destinations again and again, and the hash was a twelfth of a submission's own work."""
    lower = address[2:].lower()
    digest = keccak(lower.encode("ascii")).hex()
    spelled = (c.upper() if d in _UPPER_NIBBLES else c for c, d in zip(lower, digest[:40], strict=True))
    return "0x" + "".join(spelled)


def check_destination(destination: str, field: str = "destination") -> None:
    """An EVM address: 0x and 40 hex digits; mixed case must carry a valid EIP-55 checksum (an
    address all in one case carries none: nothing to hash)."""
    if not _ADDRESS.fullmatch(destination):
        raise BadRequest(
            "The destination is not an address of the asset's chain (0x and 40 hex digits).",
            errors=[{"field": field, "message": "not an EVM address"}],
        )
    body = destination[2:]
    if body != body.lower() and body != body.upper() and destination != eip55(destination):
        raise BadRequest(
            "The destination's mixed-case checksum (EIP-55) is wrong: a mistyped address.",
            errors=[{"field": field, "message": "bad EIP-55 checksum"}],
        )


def local_chain_path(data_dir: Path) -> Path:
    return Path(data_dir) / "chain" / f"{LOCAL_CHAIN_ID}.db"


def open_local_chain(settings: Settings) -> Any:
    from appliance.engine.chain.local import LocalChain

    return LocalChain(local_chain_path(settings.data_dir), block_seconds=settings.local_block_seconds)


def import_chain_modules(settings: Settings) -> None:
    """Import the chains' modules now (the embedded chain's EVM takes most of a second), for a
    parent that forks serving processes: they share the code instead of each importing it."""
    import appliance.engine.chain.rpc

    if settings.local_chain:
        import appliance.engine.chain.local  # noqa: F401


def build_chains(settings: Settings) -> Chains:
    from appliance.engine.chain.guard import GuardedChain
    from appliance.engine.chain.rpc import RpcChain

    chains: dict[str, Chain] = {}
    assets: list[Asset] = []
    if settings.local_chain:
        local = open_local_chain(settings)
        chains[LOCAL_CHAIN_ID] = local
        confirmations = settings.local_confirmations
        assets.append(
            Asset(LOCAL_CHAIN_ID, "ETH", "native", 18, confirmations, None, LOCAL_NETWORK_ID, "local")
        )
        assets.append(
            Asset(
                LOCAL_CHAIN_ID,
                "USDC",
                "ERC20",
                6,
                confirmations,
                local.usdc_contract,
                LOCAL_NETWORK_ID,
                "local",
            )
        )
    for config in settings.chains:
        # Used only while the node serves the configured network (checked at first use, after a
        # failed call and every half minute: chain/guard.py).
        chains[config.id] = GuardedChain(
            RpcChain(config.id, config.rpc_url, config.network_id, config.environment)
        )
        assets.extend(_asset(config.id, config.network_id, config.environment, a) for a in config.assets)
    return Chains(chains, assets)


def declared_assets(settings: Settings) -> list[Asset]:
    """The assets ``build_chains`` gives, from the settings alone: no chain is opened or asked
    (the signer checks transactions against them and opens no network connection)."""
    assets: list[Asset] = []
    if settings.local_chain:
        from appliance.engine.chain.local import usdc_contract

        confirmations = settings.local_confirmations
        assets.append(
            Asset(LOCAL_CHAIN_ID, "ETH", "native", 18, confirmations, None, LOCAL_NETWORK_ID, "local")
        )
        assets.append(
            Asset(
                LOCAL_CHAIN_ID, "USDC", "ERC20", 6, confirmations, usdc_contract(), LOCAL_NETWORK_ID, "local"
            )
        )
    for config in settings.chains:
        assets.extend(_asset(config.id, config.network_id, config.environment, a) for a in config.assets)
    return assets


def _asset(chain_id: str, network_id: int, environment: str, config: AssetConfig) -> Asset:
    contract = eip55(config.contract) if config.contract else None
    return Asset(
        chain_id,
        config.code,
        config.kind,
        config.decimals,
        config.confirmations,
        contract,
        network_id,
        environment,
        config.low_balance_minor,
        config.sweep_min_minor,
    )
