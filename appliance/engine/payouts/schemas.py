"""Payout request and response shapes; every pattern of the specification's table."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import QuerySchema, Schema

PayoutIdStr = Annotated[str, StringConstraints(pattern=r"^pyo_[a-z0-9]{8,48}$")]
AssetStr = Annotated[str, StringConstraints(pattern=r"^[A-Z0-9]{2,16}$")]
AmountMinorStr = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,38}$")]
DestinationStr = Annotated[str, StringConstraints(pattern=r"^\S{1,256}$")]
Status = Literal["REQUESTED", "SIGNED", "BROADCAST", "COMPLETED", "COMPLETED_SHORT", "FAILED"]


class PayoutPath(BaseModel):
    payout_id: PayoutIdStr


class PayoutSubmit(Schema):
    payoutId: PayoutIdStr
    asset: AssetStr
    amountMinor: AmountMinorStr = Field(description="decimal string of minor units; a JSON number is refused")
    destination: DestinationStr
    # Not part of the specification's body, whose unknown fields are ignored: typed loosely here so
    # that a client of the specification sending something else under this name is answered as
    # before; the service checks it (appliance/engine/payouts/instructions.py).
    instructionSignature: Any = Field(
        default=None,
        description=(
            "Extra to the specification: the operator's Ed25519 signature (128 lower-case hex digits) "
            "over the canonical instruction, the UTF-8 bytes of "
            '`{"amountMinor":…,"asset":…,"chainId":…,"destination":…,"payoutId":…}` (keys sorted, no '
            "whitespace, destination lower-cased, chainId the asset's chain). Required, and verified, "
            "while the operator has a signing key (`appliance operator add-signing-key`): missing or "
            "not verifying is answered 400 with `errors[].field` instructionSignature. Without a key "
            "a well-formed one is stored unverified and anything else ignored. docs/engine-auth.md"
        ),
        json_schema_extra={"type": "string", "pattern": "^[0-9a-f]{128}$"},
    )


class PayoutSubmitted(BaseModel):
    payoutId: str
    status: Status
    outcome: Literal["ACCEPTED", "REPLAYED"]


class Transition(BaseModel):
    model_config = {"populate_by_name": True}
    from_: Status | None = Field(alias="from")
    to: Status
    occurredAt: str


class Attempt(BaseModel):
    occurredAt: str
    outcome: str
    txHash: str | None


class Broadcast(BaseModel):
    signedPayloadDigest: str = Field(
        description="sha256: of the signed transaction in force (a fee bump replaces it)"
    )
    wallet: str | None = Field(description="the sending wallet of the reservation (wallet, nonce)")
    nonce: str | None = Field(description="the reserved nonce, a decimal string")
    networkFeeMinor: str | None = Field(
        description="gas paid once mined, in minor units of the chain's native asset; null before"
    )


class PayoutEntry(BaseModel):
    payoutId: str
    status: Status
    asset: str
    amountMinor: str
    destination: str
    chainId: str
    txHash: str | None
    reason: str | None
    createdAt: str
    updatedAt: str
    deliveredMinor: str | None = Field(
        description="once COMPLETED or COMPLETED_SHORT: the minor units that reached the destination "
        "(less than amountMinor only when COMPLETED_SHORT: a token that takes a fee on transfer); "
        "null before"
    )
    debitedMinor: str | None = Field(
        description="once COMPLETED or COMPLETED_SHORT: the minor units that left the payout wallet, "
        "which the operator's balance is debited; null before"
    )


class PayoutDetail(PayoutEntry):
    broadcast: Broadcast | None = Field(description="broadcast reservation; null until the payout is signed")
    attempts: list[Attempt]
    transitions: list[Transition]


class PayoutListQuery(QuerySchema):
    status: Status | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 50
    cursor: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")] | None = None


class PayoutPage(BaseModel):
    payouts: list[PayoutEntry]
    nextCursor: str | None
