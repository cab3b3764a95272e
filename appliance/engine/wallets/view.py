"""What GET /v1/payout-wallet shows: both custody wallets on every chain with their balances."""

from __future__ import annotations

from typing import Any

from appliance.engine.chain.base import ChainError
from appliance.engine.chain.registry import Chains
from appliance.engine.custody import CustodyKeys


def wallet_view(chains: Chains, custody: CustodyKeys) -> dict[str, Any]:
    """GET /v1/payout-wallet: both wallets on every chain, balances as decimal strings of minor
    units (null when the chain cannot be reached right now)."""

    def entries(address: str) -> list[dict[str, Any]]:
        out = []
        for chain_id, chain in chains.chains.items():
            balances = []
            for asset in chains.assets_of(chain_id):
                try:
                    amount: str | None = str(chain.balance(address, asset.contract))
                except ChainError:
                    amount = None
                balances.append({"assetCode": asset.code, "assetId": asset.asset_id, "amountMinor": amount})
            out.append({"address": address, "chainId": chain_id, "balances": balances})
        return out

    return {"payoutWallet": entries(custody.payout_address), "feeWallet": entries(custody.fee_address)}
