"""Shapes of the company's e-HDM settings, an order's item lines and its fiscal receipts."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints
from pydantic_core import PydanticCustomError

from appliance.common.api import ONE_LINE, QuerySchema, Schema

Pem = Annotated[
    str, StringConstraints(min_length=1, max_length=20000, pattern=r"^\s*-----BEGIN [A-Z0-9 ]+-----")
]
AdgCode = Annotated[str, StringConstraints(min_length=1, max_length=16, pattern=r"^[0-9][0-9.]{0,15}$")]
Unit = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20), ONE_LINE]
Tin = Annotated[str, StringConstraints(pattern=r"^[0-9]{8}$")]
ItemName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), ONE_LINE]
GoodCode = Annotated[str, StringConstraints(min_length=1, max_length=30, pattern=r"^[0-9A-Za-z._-]+$")]


# A quantity with at most three decimals (the manual's scale), as a decimal string.
def _positive(value: str) -> str:
    if Decimal(value) <= 0:
        raise PydanticCustomError("quantity_positive", "quantity must be greater than zero")
    return value


Quantity = Annotated[
    str,
    StringConstraints(min_length=1, max_length=11, pattern=r"^[0-9]{1,7}(\.[0-9]{1,3})?$"),
    AfterValidator(_positive),
]


class FiscalSettingsIn(Schema):
    enabled: bool = True
    baseUrl: Annotated[
        str, StringConstraints(min_length=9, max_length=300, pattern=r"^https://[^\s?#]+$")
    ] = Field(description="the e-HDM service's address (https)")
    crn: Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[0-9A-Za-z]+$")] = Field(
        description="the cash register's number, the one the certificate is bound to"
    )
    certificatePem: Pem = Field(description="the client certificate (mutual TLS)")
    privateKeyPem: Pem | None = Field(
        default=None, description="write-only, kept sealed; leave out to keep the key saved before"
    )
    serverCaPem: Pem | None = Field(
        default=None, description="the service's CA when not in the system's store"
    )
    cashierId: Annotated[int, Field(ge=1, le=999999)]
    department: Annotated[int, Field(ge=1, le=9999)]
    taxRegime: Literal[1, 2, 3, 7] = Field(
        description="1 VAT, 2 without VAT, 3 turnover tax, 7 micro-business"
    )
    adgCode: AdgCode = Field(description="the default product classification (ԱՏԳ) code")
    feeAdgCode: AdgCode | None = Field(
        default=None, description="the delivery-fee line's code; adgCode when absent"
    )
    unit: Unit = Field(description="the unit of the lines, as the manual names it (e.g. հատ)")
    issueAsAgent: bool = Field(
        default=False, description="receipts name the shop's TIN (the order's partnerTin)"
    )
    feeOnReceipt: bool = Field(
        default=True, description="the recipient's cash includes the order's delivery fee: a line of its own"
    )


class FiscalSettingsOut(BaseModel):
    enabled: bool
    baseUrl: str
    crn: str
    certificatePem: str = Field(description="the client certificate (public); never the key")
    serverCaPem: str | None
    certificateSubject: str
    certificateNotAfter: str
    hasPrivateKey: bool
    hasServerCa: bool
    cashierId: int
    department: int
    taxRegime: int
    adgCode: str
    feeAdgCode: str | None
    unit: str
    issueAsAgent: bool
    feeOnReceipt: bool
    updatedAt: str | None


class FiscalSettingsEnvelope(BaseModel):
    settings: FiscalSettingsOut | None


class SetupCall(BaseModel):
    ok: bool
    message: str


class ItemLine(Schema):
    """One line of the order's fiscal receipt."""

    name: ItemName
    quantity: Quantity = Field(description='a decimal string, at most three decimals ("2", "0.5")')
    priceAmd: Annotated[int, Field(ge=1, le=10**10)] = Field(description="the unit price, whole drams")
    adgCode: AdgCode | None = Field(default=None, description="the company's default when absent")
    unit: Unit | None = None
    code: GoodCode | None = Field(default=None, description="the shop's own product code")


ItemLines = Annotated[list[ItemLine], Field(min_length=1, max_length=100)]


class ReceiptOut(BaseModel):
    kind: Literal["sale", "return"]
    status: Literal["queued", "sending", "printed", "unknown", "failed"]
    cashAmd: int
    attempts: int
    lastError: str | None
    receiptId: str | None
    fiscalNumber: str | None
    qr: str | None
    createdAt: str
    printedAt: str | None


class ReceiptList(BaseModel):
    receipts: list[ReceiptOut]


class Decision(Schema):
    kind: Literal["sale", "return"] = "sale"
    outcome: Literal["printed", "not_printed"]
    receiptId: (
        Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z-]+$")] | None
    ) = Field(default=None, description="with printed: the receipt found on e-HDM (looked up with printCopy)")


class OrderReceipt(BaseModel):
    state: Literal["queued", "printed", "returning", "returned"]
    receiptId: str | None
    fiscalNumber: str | None
    qr: str | None


class GoodsQuery(QuerySchema):
    # A query string's text: the regimes' numbers as the manual lists them.
    taxRegime: Literal["1", "2", "3", "7"] = Field(description="the regime whose lists to read")
    tin: Tin = Field(description="the taxpayer's TIN the lists belong to")


class Good(BaseModel):
    goodName: str
    goodCode: str
    price: str = Field(description="a decimal string, AMD")


class GoodsList(BaseModel):
    listName: str
    taxRegimeName: str
    goods: list[Good]


class GoodsLists(BaseModel):
    goodLists: list[GoodsList]
