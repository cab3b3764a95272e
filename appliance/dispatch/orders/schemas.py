"""Order request and response shapes."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, EmailStr, Field, StringConstraints
from pydantic_core import PydanticCustomError

from appliance.common.api import ONE_LINE, QuerySchema, Schema
from appliance.dispatch.fiscal.schemas import ItemLines, OrderReceipt, Tin
from appliance.dispatch.geo_types import LatLon

OrderStatus = Literal[
    "draft", "ready", "assigned", "picked_up", "arrived", "delivered", "failed", "cancelled"
]
FailureReason = Literal["recipient_absent", "refused", "wrong_address", "other"]
Text200 = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
Address = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE]
Phone = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE]
Amount = Annotated[int, Field(ge=0, le=10**12)]
Weight = Annotated[float, Field(ge=0, le=10000)]
# Issue 27: the shop's order number, the parts of an address a courier needs at the door, a note.
ExternalRef = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), ONE_LINE]
DoorPart = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40), ONE_LINE]
CourierNote = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE]
# Issue 28: the language of messages to the recipient; the company's default when absent.
RecipientLanguage = Literal["hy", "ru", "en"]
# Issue 47: what a delivery must carry (appliance/dispatch/orders/proof.py).
ProofKind = Literal["photo", "signature", "code", "scan", "name", "age"]
ProofKinds = Annotated[list[ProofKind], Field(max_length=6)]
PROOF_DESCRIPTION = (
    "beyond the specification (issue 47): the proof the delivery needs, any of photo, signature, "
    "code, scan, name, age; [] none; absent or null: the integration key's default, else the "
    "company's (PATCH /company/order-settings). code turns otpRequired on"
)


def _plausible(value: datetime) -> datetime:
    utc = value.astimezone(UTC) if 1 < value.year < 9999 else None
    if utc is None or not 2000 <= utc.year <= 2999:
        raise PydanticCustomError("datetime_range", "date-time must be between the years 2000 and 2999")
    return utc


# A date-time with its offset (RFC 3339), read as UTC; years 2000..2999.
Moment = Annotated[AwareDatetime, AfterValidator(_plausible)]


class AddressDetails(Schema):
    """Where the door is: every part optional, each 1..40 characters. Never on the tracking page."""

    entrance: DoorPart | None = None
    floor: DoorPart | None = None
    apartment: DoorPart | None = None
    intercom: DoorPart | None = None


# Issue 47: the shop (an integration key's id) an order is for, on its statements.
ShopId = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,17}$")]


class OrderCreate(Schema):
    recipientName: Text200
    recipientPhone: Phone
    amountAmd: Amount = 0
    otpRequired: bool = False
    isCod: bool = False
    codAmountAmd: Amount | None = None
    weightKg: Weight | None = None
    deliveryWindowStart: Moment | None = None
    deliveryWindowEnd: Moment | None = None
    addressLabelHy: Address
    addressLabelEn: Address | None = None
    addressLabelRu: Address | None = None
    pin: LatLon
    externalRef: ExternalRef | None = Field(
        default=None, description="The shop's order number; unique in the company (409 external_ref_taken)"
    )
    addressDetails: AddressDetails | None = None
    noteToCourier: CourierNote | None = Field(
        default=None, description="Seen by couriers, never by the recipient"
    )
    recipientLanguage: RecipientLanguage | None = Field(
        default=None, description="Messages to the recipient; the company's default when absent"
    )
    recipientEmail: EmailStr | None = Field(
        default=None, description="Where e-mailed messages go, when the company sends e-mail"
    )
    proofRequired: ProofKinds | None = Field(default=None, description=PROOF_DESCRIPTION)
    shopId: ShopId | None = Field(
        default=None,
        description="a dispatcher's order for a shop: its integration key's id (docs/statements.md; "
        "422 when the company has no such key); a key's orders are always its own, this is ignored",
    )
    items: ItemLines | None = Field(
        default=None,
        description="the fiscal receipt's lines (docs/fiscal-receipts.md); one goods line when absent",
    )
    partnerTin: Tin | None = Field(
        default=None, description="the shop's TIN, on the receipt when the company issues as its agent"
    )


class OrderPatch(Schema):
    recipientName: Text200 | None = None
    recipientPhone: Phone | None = None
    amountAmd: Amount | None = None
    otpRequired: bool | None = None
    isCod: bool | None = None
    codAmountAmd: Amount | None = None
    weightKg: Weight | None = None
    deliveryWindowStart: Moment | None = None
    deliveryWindowEnd: Moment | None = None
    addressLabelHy: Address | None = None
    addressLabelEn: Address | None = None
    addressLabelRu: Address | None = None
    pin: LatLon | None = None
    externalRef: ExternalRef | None = Field(default=None, description="null clears it")
    addressDetails: AddressDetails | None = Field(
        default=None, description="replaces every part; null clears"
    )
    noteToCourier: CourierNote | None = Field(default=None, description="null clears it")
    recipientLanguage: RecipientLanguage | None = Field(
        default=None, description="null: the company's default"
    )
    recipientEmail: EmailStr | None = Field(default=None, description="null clears it")
    proofRequired: ProofKinds | None = Field(
        default=None, description="beyond the specification: as on create; null: the company's setting"
    )
    shopId: ShopId | None = Field(
        default=None, description="the shop the order is for (a draft or ready order); null: none"
    )
    deliveryFeeAmd: Amount | None = Field(
        default=None,
        description="the delivery fee charged to the shop, whole drams; null clears it. Alone it may "
        "change in any status but cancelled, until the shop's statement holding the order is paid "
        "(409 fee_paid); audited",
    )
    items: ItemLines | None = Field(default=None, description="the fiscal receipt's lines; null clears them")
    partnerTin: Tin | None = Field(default=None, description="null clears it")


class LastAttempt(BaseModel):
    courierId: str
    courierName: str
    collectedAmountAmd: int | None


class Proof(BaseModel):
    recipientName: str | None
    hasPhoto: bool
    notes: str | None
    method: Literal["code", "photo", "name"] | None
    hasSignature: bool = Field(default=False, description="beyond the specification (issue 47)")
    scannedCode: str | None = Field(default=None, description="beyond the specification (issue 47)")
    ageChecked: bool | None = Field(default=None, description="beyond the specification (issue 47)")


class AddressDetailsOut(BaseModel):
    entrance: str | None
    floor: str | None
    apartment: str | None
    intercom: str | None


class NeedsAttention(BaseModel):
    reason: str = Field(description="why the server refused the courier's queued move, as the app showed it")
    move: str | None = Field(description="the status the courier's refused move asked for")
    heldAmountAmd: int | None = Field(
        description="cash the courier collected with the refused move: held by the courier, not yet recorded"
    )
    at: str


class AllowedMoves(BaseModel):
    """What may be done with the order in its status (the API's own table, so clients need not
    copy it): POST /orders/{id}/status targets, the courier's POST /courier/orders/{id}/status
    targets, and whether assign, deliver-for-courier and reassign (hand-over) apply."""

    status: list[OrderStatus]
    courier: list[OrderStatus]
    assign: bool
    deliverForCourier: bool
    reassign: bool


class HandedOverFrom(BaseModel):
    courierId: str
    courierName: str


class OrderOut(BaseModel):
    id: str
    publicId: str
    status: OrderStatus
    allowedMoves: AllowedMoves
    handedOverFrom: HandedOverFrom | None = Field(
        default=None, description="while picked up or arrived: the courier who handed the parcel over"
    )
    recipientName: str
    recipientPhone: str
    amountAmd: int
    otpRequired: bool
    deliveryCodeLocked: bool
    isCod: bool
    codAmountAmd: int
    weightKg: float | None
    deliveryWindowStart: str | None
    deliveryWindowEnd: str | None
    addressLabelHy: str
    addressLabelEn: str | None
    addressLabelRu: str | None
    pin: LatLon
    courierId: str | None
    sequence: int | None
    attempt: int
    failureReason: FailureReason | None
    proof: Proof | None
    collectedAmountAmd: int | None
    lastAttempt: LastAttempt | None = None
    externalRef: str | None = None
    addressDetails: AddressDetailsOut | None = None
    noteToCourier: str | None = None
    recipientLanguage: RecipientLanguage | None = None
    recipientEmail: str | None = None
    needsAttention: NeedsAttention | None = Field(
        default=None,
        description="a queued move of the courier's app the server refused (docs/courier-app.md), "
        "until the order moves on",
    )
    needsPin: str | None = Field(
        default=None,
        description="beyond the specification: an imported draft whose address could not be placed "
        "waits at a stand-in pin (the depot) for its real one, and why; null once PATCH sets a pin",
    )
    proofRequired: list[ProofKind] | None = Field(
        default=None,
        description="beyond the specification (issue 47): the proof this order's delivery needs; "
        "null: the company's setting (GET /company/order-settings) decides",
    )
    deliveryFeeAmd: int | None = Field(
        default=None,
        description="the delivery fee charged to the shop (docs/fees.md), whole drams; null when no "
        "fee zone holds the pin or the order predates fees",
    )
    shopId: str | None = Field(
        default=None, description="the integration key (shop) that created or imported the order"
    )
    items: list[dict[str, Any]] | None = Field(default=None, description="the fiscal receipt's lines")
    partnerTin: str | None = None
    fiscalReceipt: OrderReceipt | None = Field(
        default=None, description="the order's fiscal receipt once queued: its state, number and QR text"
    )
    createdAt: str
    updatedAt: str
    finishedAt: str | None


class ProofLink(BaseModel):
    url: str = Field(description="short-lived presigned GET; the storage is never public")
    expiresIn: int = Field(description="seconds")


class ProofRecord(BaseModel):
    """What a delivery (or a failed attempt) recorded as proof (issue 47, docs/orders.md)."""

    orderId: str
    publicId: str
    externalRef: str | None
    status: Literal["delivered", "failed"]
    finishedAt: str | None
    required: list[ProofKind] = Field(description="the proof the order needed when it was delivered")
    recipientName: str | None
    notes: str | None
    method: Literal["code", "photo", "name"] | None
    codeChecked: bool = Field(description="the recipient's delivery code was given and checked")
    scannedCode: str | None = Field(description="the parcel's barcode or QR as the courier scanned it")
    ageChecked: bool
    photo: ProofLink | None
    signature: ProofLink | None = Field(description="the recipient's signature, a PNG")


class OrderEnvelope(BaseModel):
    order: OrderOut


class OrderList(BaseModel):
    orders: list[OrderOut]
    hasMore: bool


class OrderListQuery(QuerySchema):
    date: Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    limit: Annotated[int, Field(ge=1, le=2000)] | None = None
    # Literal words, not a bool: pydantic's lax bool would also take yes, on, 1 and t.
    needsPin: Literal["true", "false"] | None = Field(
        default=None,
        description=(
            "true: only the orders that need a pin (an imported address the index could not place: "
            "needsPin set); false: only those that do not; omitted: every order"
        ),
    )


class StatusChange(Schema):
    status: OrderStatus
    reason: Annotated[str, StringConstraints(max_length=1000)] | None = None


class DeliverForCourier(Schema):
    otpCode: Annotated[str, StringConstraints(min_length=1, max_length=32)] | None = Field(
        default=None, description="the delivery code the recipient gives"
    )
    recipientName: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
        | None
    ) = Field(default=None, description="who received it; required when no otpCode is given")
    collectedAmountAmd: Amount | None = Field(
        default=None, description="cash on delivery the courier took; defaults to codAmountAmd"
    )
    notes: Annotated[str, StringConstraints(max_length=1000)] | None = None


class AssignRequest(Schema):
    courierId: Annotated[int, Field(ge=1)]


YerevanDay = date  # a name of its own: a field below is called ``date``


class BulkRequest(Schema):
    orderIds: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1, max_length=2000)]
    action: Literal["ready", "assign", "cancel", "move"]
    courierId: Annotated[int, Field(ge=1)] | None = Field(default=None, description="for assign")
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)] | None = (
        Field(default=None, description="for cancel (required)")
    )
    date: YerevanDay | None = Field(
        default=None,
        description=(
            "for move (required): the Yerevan day the orders' delivery windows move to, times kept; an "
            "order without a window gets that whole day"
        ),
    )


class BulkItem(BaseModel):
    orderId: str
    ok: bool
    problem: dict[str, Any] | None = None


class BulkResult(BaseModel):
    results: list[BulkItem]


class AssignmentOut(BaseModel):
    id: str
    orderId: str
    courierId: str
    sequence: int | None
    status: Literal["active", "cancelled", "done"]
    createdAt: str


class AssignResult(BaseModel):
    assignment: AssignmentOut
    order: OrderOut


class OnBehalfOf(BaseModel):
    courierId: str
    name: str


class OrderEventOut(BaseModel):
    id: str
    kind: str
    fromStatus: str | None
    toStatus: str | None
    actorUserId: str | None
    actorName: str | None = Field(default=None, description="who made the step (null: the system)")
    actorRole: Literal["owner", "dispatcher", "courier"] | None = Field(
        default=None, description="their role in the company now (null: the system, or no longer a member)"
    )
    onBehalfOf: OnBehalfOf | None = Field(
        default=None, description="a delivery a dispatcher recorded for this courier"
    )
    data: dict
    createdAt: str


class OrderEvents(BaseModel):
    events: list[OrderEventOut]


class PhotoUrl(BaseModel):
    url: str
    expiresIn: int


class ImportQuery(QuerySchema):
    dryRun: bool = Field(
        default=False, description="check every row and answer the same counts; create nothing"
    )
    status: Literal["ready", "draft"] | None = Field(
        default=None,
        description=(
            "what the created orders arrive as; the company's importStatus (ready unless changed in "
            "PATCH /company/order-settings) when omitted"
        ),
    )
    shopId: ShopId | None = Field(
        default=None,
        description="a dispatcher's file of a shop's orders: the shop (integration key id) they are "
        "for (docs/statements.md; 422 when the company has no such key); a key's file is always its own",
    )


class ImportRefusal(BaseModel):
    row: int = Field(description="the file's row (the header is row 1)")
    column: str | None = Field(
        description="the column at fault (create-body name: lat, floor, recipientPhone…)"
    )
    header: str | None = Field(
        default=None, description="the column as the file's header names it (Հեռախոս, Телефон…), for people"
    )
    message: str


class ImportPinNeeded(BaseModel):
    row: int = Field(description="the file's row (the header is row 1)")
    orderId: str | None = Field(description="the draft kept for it (null in a dry run)")
    header: str | None = Field(description="the address column as the file's header names it")
    message: str = Field(description="why the address could not be placed")


class ImportResult(BaseModel):
    created: int
    existing: int = Field(description="rows whose externalRef the company already has (never created twice)")
    refused: list[ImportRefusal] = Field(description="one item per problem; a row may have several")
    orderIds: list[str] = Field(description="orders the file names, created or existing, in file order")
    needsPin: list[ImportPinNeeded] = Field(
        default_factory=list,
        description="rows whose address could not be placed: created as drafts that need a pin",
    )
