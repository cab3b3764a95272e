"""Courier app request shapes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import ONE_LINE, QuerySchema, Schema
from appliance.dispatch.couriers.schemas import CourierOut, LocationOut, ShiftOut
from appliance.dispatch.geo_types import Latitude, Longitude
from appliance.dispatch.orders.schemas import Moment, OrderOut


class LocationPoint(Schema):
    lat: Latitude
    lon: Longitude
    capturedAt: Moment
    accuracyM: Annotated[int, Field(ge=0, le=100000)] | None = None
    source: Annotated[str, StringConstraints(max_length=40)] | None = None


class LocationBatch(Schema):
    points: Annotated[list[LocationPoint], Field(min_length=1, max_length=50)]


class LocationAccepted(BaseModel):
    accepted: int = Field(description="points stored (duplicates of (courier, capturedAt) are skipped)")
    duplicates: int = Field(
        description="points already stored for the same capturedAt, or repeated in the batch"
    )
    current: LocationOut | None = Field(description="the point with the newest capturedAt ever received")


class LocationCurrent(BaseModel):
    location: LocationOut | None


class CourierMe(BaseModel):
    courier: CourierOut
    dispatchPhone: str | None = Field(
        default=None,
        description="the company's phone (else its support phone): the app's \"call the dispatcher\"",
    )


class ShiftEnvelope(BaseModel):
    shift: ShiftOut


class CourierOrders(BaseModel):
    orders: list[OrderOut] = Field(description="assigned, picked_up or arrived, in run order")


ScannedCode = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]


class StatusResult(BaseModel):
    order: OrderOut
    replayed: bool = Field(description="true when a settled idempotencyKey answered with its first answer")


class UploadUrl(BaseModel):
    key: str = Field(description="pass back as photoKey")
    url: str = Field(description="presigned PUT; send the photo with the same Content-Type")
    expiresIn: int = Field(description="seconds")


class HistoryItem(BaseModel):
    orderId: str
    publicId: str
    status: Literal["delivered", "failed"]
    at: str
    attempt: int | None
    failureReason: str | None
    amountAmd: int
    collectedAmountAmd: int | None
    addressLabelHy: str
    fiscalNumber: str | None = Field(
        default=None, description="the order's fiscal receipt on e-HDM, once printed"
    )


class History(BaseModel):
    history: list[HistoryItem] = Field(description="newest first")


class SelfProfilePatch(Schema):
    displayName: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
        | None
    ) = None
    phone: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE] | None
    ) = None
    vehicleLabel: (
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=120), ONE_LINE] | None
    ) = None
    photoUrl: Annotated[str, StringConstraints(pattern=r"^https?://\S{1,1990}$")] | None = None
    preferredLanguage: str | None = None
    onboardingCompleted: bool | None = None


class CourierStatusChange(Schema):
    status: Literal["picked_up", "arrived", "delivered", "failed"]
    failureReason: Literal["recipient_absent", "refused", "wrong_address", "other"] | None = None
    recipientName: Annotated[str, StringConstraints(min_length=1, max_length=200), ONE_LINE] | None = None
    photoKey: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None
    otpCode: Annotated[str, StringConstraints(min_length=1, max_length=32)] | None = None
    otpVerified: bool | None = Field(default=None, description="deprecated and ignored")
    signatureKey: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = Field(
        default=None,
        description="beyond the specification (issue 47): the recipient's signature, a PNG uploaded "
        "through proof/upload-url with kind signature",
    )
    scannedCode: ScannedCode | None = Field(
        default=None,
        description="beyond the specification: the parcel's barcode or QR as scanned; must read the "
        "order's externalRef or its publicId (422 otherwise)",
    )
    ageChecked: bool | None = Field(
        default=None, description="beyond the specification: the courier checked the recipient's age"
    )
    collectedAmountAmd: Annotated[int, Field(ge=0, le=10**12)] | None = None
    notes: Annotated[str, StringConstraints(max_length=1000)] | None = None
    idempotencyKey: Annotated[str, StringConstraints(min_length=8, max_length=128)] | None = None
    occurredAt: Moment | None = Field(
        default=None,
        description="when the courier tapped the move, by the phone's clock (a move queued offline). "
        "Recorded as the move's time when it is not in the future, not before the order's previous "
        "move and at most 12 hours ago; otherwise the server's time, with this moment and the "
        "difference kept in the order's history (docs/courier-app.md)",
    )


class PickUpRequest(Schema):
    """Orders picked up at the depot in one request: by id, or by the code scanned off each parcel
    (its externalRef or publicId); each order's move is its own audited transition."""

    orderIds: list[Annotated[str, StringConstraints(pattern=r"^[0-9]{1,18}$")]] = Field(
        default_factory=list, max_length=100
    )
    codes: list[ScannedCode] = Field(default_factory=list, max_length=100)
    idempotencyKey: Annotated[str, StringConstraints(min_length=8, max_length=100)] | None = Field(
        default=None,
        description="each order's move is sent under this key and the order's id, so a batch resent "
        "after a lost answer moves nothing twice",
    )
    occurredAt: Moment | None = Field(default=None, description="as on the single move")


class PickUpItem(BaseModel):
    orderId: str | None = Field(description="null when a code named none of the courier's orders")
    code: str | None = Field(description="the scanned code, when the order was named by one")
    status: int = Field(description="the status a single POST /courier/orders/{id}/status answered")
    order: OrderOut | None
    replayed: bool = False
    problem: dict | None = Field(description="the Problem a single move would have answered")


class PickUpResult(BaseModel):
    results: list[PickUpItem]
    pickedUp: int = Field(description="orders now picked up by this request (replays included)")


class AttentionReport(Schema):
    move: Literal["picked_up", "arrived", "delivered", "failed"] = Field(
        description="the status the refused queued move asked for"
    )
    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE
    ] = Field(description="why the server refused it, as the app shows it to the courier")
    heldAmountAmd: Annotated[int, Field(ge=0, le=10**12)] | None = Field(
        default=None, description="cash the courier collected with the refused move"
    )


class OtpVerify(Schema):
    code: Annotated[str, StringConstraints(min_length=1, max_length=32)]


class OtpResult(BaseModel):
    required: bool
    valid: bool


class ProofUploadRequest(Schema):
    contentType: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    kind: Literal["photo", "signature"] = Field(
        default="photo",
        description="beyond the specification: signature for the recipient's signature (image/png "
        "only), passed back as signatureKey",
    )
    contentLength: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description=(
            "The photo's size in bytes, optional: with an S3 bucket the link is then signed for "
            "exactly this Content-Length (and always for the content type), so the bucket refuses "
            "any other. Over the upload limit (max_upload_bytes): 413"
        ),
    )


class HistoryQuery(QuerySchema):
    limit: Annotated[int, Field(ge=1, le=200)] = 50
