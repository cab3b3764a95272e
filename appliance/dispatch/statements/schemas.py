"""Shop statement shapes (docs/statements.md)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema
from appliance.dispatch.reports.schemas import RangeQuery

__all__ = ["RangeQuery"]


class ShopOut(BaseModel):
    id: str = Field(description="the integration key's id")
    name: str
    revoked: bool


class ShopList(BaseModel):
    shops: list[ShopOut]


class StatementLine(BaseModel):
    kind: Literal["delivered", "returned"]
    publicId: str
    externalRef: str | None
    finishedAt: str | None = Field(description="Yerevan wall time, YYYY-MM-DDTHH:MM:SS")
    codCollectedAmd: int
    feeAmd: int
    netAmd: int


class StatementCash(BaseModel):
    ordersCollectedAmd: int = Field(description="the cash the delivered orders record as collected")
    ledgerCollectedAmd: int = Field(description="the cash report's collections of the same orders")
    handedOverAmd: int = Field(description="of which couriers handed over (confirmed handovers)")
    withCouriersAmd: int = Field(description="of which couriers still hold")
    receiptedAmd: int = Field(
        description="of ordersCollectedAmd, the cash whose fiscal receipt is printed on e-HDM "
        "(docs/fiscal-receipts.md)"
    )
    withoutReceiptAmd: int = Field(
        description="the rest: receipts queued or waiting on a person, or a company without e-HDM"
    )
    balanced: bool = Field(description="ordersCollectedAmd equals ledgerCollectedAmd")


class RemittanceOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    id: str
    shopId: str
    start: str = Field(alias="from")
    end: str = Field(alias="to")
    orders: int
    codCollectedAmd: int
    feesAmd: int
    netAmd: int
    reference: str
    paidAt: str


class Statement(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    shop: ShopOut
    start: str = Field(alias="from")
    end: str = Field(alias="to")
    delivered: int
    returned: int
    codCollectedAmd: int
    feesAmd: int
    netAmd: int = Field(description="codCollectedAmd - feesAmd; negative when the shop owes the company")
    cash: StatementCash
    lines: list[StatementLine]
    linesComplete: bool = Field(description="false past 2000 lines: the CSV and .xlsx carry them all")
    remittances: list[RemittanceOut] = Field(description="the paid periods that overlap this one")


class RemittanceCreate(Schema):
    start: dt.date = Field(alias="from", description="first day, Yerevan time")
    end: dt.date = Field(alias="to", description="the day after the last, as the reports' [from, to)")
    reference: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE
    ] = Field(description="the bank transfer's or cash receipt's reference")


class RemittanceEnvelope(BaseModel):
    remittance: RemittanceOut


class RemittanceList(BaseModel):
    remittances: list[RemittanceOut]
