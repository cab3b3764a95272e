"""GET /v1/assets: the asset entries this deployment offers (signed)."""

from __future__ import annotations

from flask import Blueprint
from pydantic import BaseModel, Field

from appliance.engine.auth.signature import signed_endpoint
from appliance.engine.runtime import runtime

bp = Blueprint("assets", __name__)


class AssetEntry(BaseModel):
    assetId: str = Field(description="<chainId>:<assetCode>")
    assetCode: str
    chainId: str
    kind: str = Field(description="native or ERC20")
    contract: str | None = Field(description="the token contract (ERC20); null for the native asset")
    decimals: int
    networkId: int = Field(description="EIP-155 chain id")
    confirmations: int = Field(description="blocks (the including one counted) before a transfer is final")
    environment: str = Field(description="local for the embedded chain")


class AssetList(BaseModel):
    assets: list[AssetEntry]


@signed_endpoint(bp, "GET", "/v1/assets", response=AssetList, tags=["Assets"])
def list_assets():
    """Every asset of every chain of this deployment; the same ticker on two networks is two entries."""
    return {"assets": [asset.entry() for asset in runtime().chains.assets]}
