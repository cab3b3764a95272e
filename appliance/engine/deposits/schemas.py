"""Deposit address and deposit shapes; identifiers validated before any store is reached."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import QuerySchema, Schema

# accountRef: the spec gives no pattern; an operator's own customer reference, 1..128 characters
# that are safe in URLs and logs.
AccountRefStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.@-]{1,128}$")]
ChainIdStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{3,32}$")]
DepositStatus = Literal["PENDING", "CONFIRMED", "RETRACTED"]


class DepositAddressRequest(Schema):
    accountRef: AccountRefStr = Field(
        description="the operator's reference of its customer: 1..128 of A-Za-z0-9:_.@-"
    )
    chainId: ChainIdStr


class AddressAsset(BaseModel):
    assetCode: str
    contract: str | None
    decimals: int
    confirmations: int


class DepositAddressBody(BaseModel):
    addressId: str = Field(description="waddr_ + 24 characters of [a-z0-9]")
    address: str = Field(description="derived by the engine from its custody key (EIP-55)")
    chainId: str
    accountRef: str
    derivationIndex: str = Field(description="the BIP44 address index within the operator's account, digits")
    assets: list[AddressAsset]


class DepositsQuery(QuerySchema):
    accountRef: AccountRefStr
    chainId: ChainIdStr | None = None


class Transfer(BaseModel):
    transferId: str
    chainId: str
    txHash: str
    outputIndex: int = Field(description="the log index of an ERC20 Transfer; 0 for a native transfer")
    assetCode: str
    amountMinor: str
    blockHeight: str
    status: DepositStatus = Field(
        description="PENDING below the asset's confirmations, CONFIRMED at them, RETRACTED when its block "
        "left the canonical chain and the transaction is in no canonical block (it may come back)"
    )
    detectedAt: str


class Deposits(BaseModel):
    operatorId: str
    accountRef: str
    transfers: list[Transfer]
