"""GET /v1/payout-wallet: the payout wallet and the fee wallet with their balances (signed)."""

from __future__ import annotations

from flask import Blueprint
from pydantic import BaseModel, Field

from appliance.common.problems import Unavailable
from appliance.engine.auth.signature import signed_endpoint
from appliance.engine.custody import KEY_REFUSED, SIGNER_SILENT, CustodyError
from appliance.engine.runtime import runtime
from appliance.engine.wallets.view import wallet_view

bp = Blueprint("wallets", __name__)


class Balance(BaseModel):
    assetCode: str
    assetId: str
    amountMinor: str | None = Field(
        description="decimal string of minor units; null when the chain is unreachable"
    )


class WalletOnChain(BaseModel):
    address: str
    chainId: str
    balances: list[Balance]


class PayoutWallets(BaseModel):
    payoutWallet: list[WalletOnChain] = Field(description="sends every payout; one entry per chain")
    feeWallet: list[WalletOnChain] = Field(
        description="holds the native asset that tops up the payout wallet's gas; one entry per chain"
    )


@signed_endpoint(
    bp,
    "GET",
    "/v1/payout-wallet",
    response=PayoutWallets,
    errors=(503,),
    tags=["Wallets"],
)
def payout_wallet():
    """Both wallets must be funded: payouts wait (with a reason on their detail) until they are."""
    rt = runtime()
    if rt.custody is None:
        raise Unavailable("This deployment has no custody key (appliance custody init).")
    if rt.custody.verify() is not None:
        raise Unavailable(KEY_REFUSED)
    try:
        return wallet_view(rt.chains, rt.custody)
    except CustodyError as exc:  # the signer went silent meanwhile
        raise Unavailable(SIGNER_SILENT) from exc
