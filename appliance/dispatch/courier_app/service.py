"""Courier app rules: GPS batches, the courier's own orders and their status moves (with
idempotency keys, delivery codes, proof and cash collection) and history. Cash itself (balance,
handovers) is the cash area's."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import is_sqlite, lock_row, locked, stored_utc, write_transaction
from appliance.common.group_commit import GroupCommit
from appliance.common.objects import IMAGE_TYPES, StorageUnavailable, new_key
from appliance.common.problems import (
    ApiError,
    BadRequest,
    Conflict,
    Invalid,
    Locked,
    NotFound,
    PayloadTooLarge,
    Unavailable,
    UnsupportedMediaType,
)
from appliance.dispatch.cash.service import record_collection
from appliance.dispatch.courier_app import moments
from appliance.dispatch.couriers.lookups import latest_location
from appliance.dispatch.couriers.serializers import courier_body, location_body
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.fiscal.service import queue_sale
from appliance.dispatch.models import Company, Courier, CourierLocation, Order, OrderEvent, StatusRequest
from appliance.dispatch.orders import codes, ids, proof
from appliance.dispatch.orders.bulk import problem_body
from appliance.dispatch.orders.serializers import order_body
from appliance.dispatch.orders.state import (
    ACTIVE,
    ON_THE_WAY,
    Status,
    audit,
    needs_code_to_deliver,
    order_payload,
    transition,
)
from appliance.dispatch.runtime import DispatchRuntime

LANGUAGES = ("hy", "ru", "en")
# What a courier may change of their own profile, by wire name: the column.
SELF_EDITABLE = {
    "displayName": "display_name",
    "phone": "phone",
    "vehicleLabel": "vehicle_label",
    "photoUrl": "photo_url",
    "preferredLanguage": "preferred_language",
    "onboardingCompleted": "onboarding_completed",
}
NOT_NULL = ("displayName", "preferredLanguage", "onboardingCompleted")
_GPS_BATCHES = GroupCommit(database)


def profile(courier: Courier) -> dict[str, Any]:
    """GET /courier/me: the courier's record and the number to call the dispatcher on (the
    company's phone, else its support phone), which the app offers when a move needs attention."""
    company = Company.get_by_id(courier.company_id)
    return {"courier": courier_body(courier), "dispatchPhone": company.phone or company.support_phone}


def update_own_profile(courier: Courier, changes: dict[str, Any]) -> dict[str, Any]:
    """A courier edits their profile (the fields of SELF_EDITABLE that the request names)."""
    if not changes:
        raise BadRequest("No changes.")
    if "preferredLanguage" in changes and changes["preferredLanguage"] not in LANGUAGES:
        raise BadRequest(
            "preferredLanguage must be hy, ru or en.",
            errors=[{"field": "preferredLanguage", "message": "hy, ru or en"}],
        )
    for required in NOT_NULL:
        if required in changes and changes[required] is None:
            raise BadRequest(f"{required} cannot be null.")
    with write_transaction(database):
        for field, value in changes.items():
            setattr(courier, SELF_EDITABLE[field], value)
        courier.save()
    return courier_body(courier)


def record_locations(courier: Courier, points: list[dict[str, Any]]) -> dict[str, Any]:
    """Store a batch; a point already stored for (courier, capturedAt) is skipped, so resending a
    batch is safe. The current location is the newest capturedAt ever received.

    This is the hottest write path (every courier, every few seconds), so it uses two plain
    parameterised statements instead of the ORM's query builder."""
    field = CourierLocation.captured_at
    sqlite = is_sqlite(database)
    received = stored_utc(clock.now(), sqlite=sqlite)
    rows: dict[Any, tuple[Any, ...]] = {}
    for p in points:
        stamp = p["capturedAt"]
        stamp = stamp if isinstance(stamp, str) else stored_utc(stamp, sqlite=sqlite)
        rows.setdefault(
            stamp, (courier.id, p["lat"], p["lon"], stamp, p.get("accuracyM"), p.get("source"), received)
        )
    param = database.param

    def store() -> dict[str, Any]:
        # One batch of a courier at a time (PostgreSQL: the courier's row locked; SQLite's write
        # lock does the same), so that two copies of a batch sent at once see each other's rows
        # and answer accepted/duplicates truthfully.
        lock_row(Courier, courier.id)
        cursor = database.cursor()
        marks = ", ".join([param] * len(rows))
        cursor.execute(
            f"SELECT captured_at FROM courier_location WHERE courier_id = {param}"
            f" AND captured_at IN ({marks})",
            (courier.id, *rows),
        )
        known = {field.db_value(field.python_value(r[0])) for r in cursor.fetchall()}
        fresh = [row for stamp, row in rows.items() if stamp not in known]
        if fresh:
            # One statement for the whole batch (at most 50 rows, 350 values): executemany steps
            # once per row, and each step lets another thread take the interpreter lock while this
            # one holds the write lock.
            row_marks = f"({', '.join([param] * 7)})"
            cursor.execute(
                "INSERT INTO courier_location"
                " (courier_id, lat, lon, captured_at, accuracy_m, source, received_at)"
                f" VALUES {', '.join([row_marks] * len(fresh))} ON CONFLICT DO NOTHING",
                [value for row in fresh for value in row],
            )
        current = location_body(latest_location(courier.id))
        if fresh:
            record_event(
                courier.company_id, "courier.location", {"courierId": str(courier.id), **(current or {})}
            )
        return {"accepted": len(fresh), "duplicates": len(points) - len(fresh), "current": current}

    if sqlite:
        # Batches that arrive together share one write transaction (common/group_commit.py):
        # SQLite has one writer at a time, and a batch's own work is far shorter than a
        # transaction's begin, commit and hand-over of the write lock.
        return _GPS_BATCHES.run(store)
    # PostgreSQL writes batches side by side (row locks): a shared transaction would hold one
    # courier's row lock while waiting for another's, and two such could deadlock.
    with write_transaction(database):
        return store()


def own_active_order(courier: Courier, order_id: int, *, lock: bool = False) -> Order:
    ids.require(order_id, "order")
    query = Order.select().where(
        (Order.id == order_id) & (Order.company == courier.company_id) & (Order.courier == courier.id)
    )
    order = (locked(query) if lock else query).first()
    if order is None:
        raise NotFound("No such order.")
    return order


def my_orders(courier: Courier) -> list[dict[str, Any]]:
    rows = Order.select().where((Order.courier == courier.id) & Order.status.in_(tuple(ACTIVE)))
    today = clock.now().astimezone(clock.YEREVAN).date()
    ordered = rows.order_by(Order.sequence.asc(nulls="LAST"), Order.id)
    company = Company.get_by_id(courier.company_id)
    # The courier's app asks for what the delivery needs: here proofRequired is the set in force
    # (the order's own, else the company's), never null.
    return [
        {**order_body(o), "proofRequired": proof.required(o, company)}
        for o in ordered
        if not _planned_for_a_later_day(o, today)
    ]


def _planned_for_a_later_day(order: Order, today: dt.date) -> bool:
    """An assigned stop whose delivery window falls on a later Yerevan day (a plan applied for
    tomorrow, issue 45): the courier sees it once that day has come, so their shift of that day
    starts with it and no earlier run mixes in tomorrow's. An order already picked up is always
    listed: the courier carries it."""
    moment = order.window_start or order.window_end
    if order.status != Status.ASSIGNED or moment is None:
        return False
    return moment.astimezone(clock.YEREVAN).date() > today


def _check_code(rt: DispatchRuntime, order: Order, code: str | None) -> bool:
    """Spend one attempt of the shared budget; True when the code is right."""
    if order.otp_attempts >= codes.MAX_ATTEMPTS:
        raise Locked("Too many wrong delivery codes; the dispatcher must help.")
    if code is not None and codes.matches(rt.master_key, order.public_id, order.otp_hash, code):
        return True
    Order.update(otp_attempts=Order.otp_attempts + 1).where(Order.id == order.id).execute()
    if order.otp_attempts + 1 >= codes.MAX_ATTEMPTS:
        # The code is now locked (deliveryCodeLocked): open boards learn it at once.
        record_event(order.company_id, "order.updated", order_payload(order))
    return False


def verify_code(rt: DispatchRuntime, courier: Courier, order_id: int, code: str) -> dict[str, Any]:
    with write_transaction(database):
        order = own_active_order(courier, order_id, lock=True)
        if not order.otp_required:
            return {"required": False, "valid": True}
        valid = _check_code(rt, order, code)
    if not valid:
        raise Invalid("The delivery code is wrong.", errors=[{"field": "code", "message": "wrong code"}])
    return {"required": True, "valid": True}


def _request_hash(body: dict[str, Any], order_id: int) -> str:
    canonical = json.dumps(
        {"orderId": order_id, **{k: v for k, v in body.items() if k != "otpVerified"}},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _replay(courier: Courier, key: str | None, digest: str) -> dict[str, Any] | None:
    """The settled answer of ``key`` (with replayed true), None when the key is new; 409 when the
    key settled a different request."""
    if not key:
        return None
    settled = StatusRequest.get_or_none((StatusRequest.courier == courier.id) & (StatusRequest.key == key))
    if settled is None:
        return None
    if settled.request_hash != digest:
        raise Conflict("This idempotency key was used for another status change.")
    return {**json.loads(settled.response), "replayed": True}


def change_status(
    rt: DispatchRuntime, courier: Courier, order_id: int, body: dict[str, Any]
) -> dict[str, Any]:
    key = body.get("idempotencyKey")
    digest = _request_hash(body, order_id)
    replay = _replay(courier, key, digest)
    if replay is not None:
        return replay
    status = body["status"]
    if status == "failed" and not body.get("failureReason"):
        raise Invalid(
            "failureReason is required to fail an order.",
            errors=[{"field": "failureReason", "message": "required"}],
        )
    wrong_code = False
    with write_transaction(database):
        order = own_active_order(courier, order_id, lock=True)
        # Checked again under the write lock: a retry racing the first call replays its answer.
        replay = _replay(courier, key, digest)
        if replay is not None:
            return replay
        if status == "delivered" and order.status in ON_THE_WAY:
            proof.check_delivery(order, body)
        if status == "delivered" and order.status in ON_THE_WAY and needs_code_to_deliver(order):
            if not body.get("otpCode"):
                raise Invalid(
                    "This order needs the delivery code.",
                    errors=[{"field": "otpCode", "message": "required"}],
                )
            wrong_code = not _check_code(rt, order, body["otpCode"])
        if not wrong_code:
            response = _apply_status(rt, courier, order, body)
            if key:
                try:
                    with database.atomic():
                        StatusRequest.create(
                            courier=courier.id,
                            key=key,
                            request_hash=digest,
                            response=json.dumps(response),
                            created_at=clock.now(),
                        )
                except peewee.IntegrityError:
                    raise Conflict("This idempotency key is being used by another request.") from None
    if wrong_code:
        raise Invalid("The delivery code is wrong.", errors=[{"field": "otpCode", "message": "wrong code"}])
    return response


def _own_order_by_code(courier: Courier, code: str) -> Order | None:
    """The courier's assigned order whose parcel reads ``code`` (its externalRef, else publicId):
    scoped to the courier inside the query, so another company's parcel names nothing."""
    value = code.strip()
    mine = (Order.company == courier.company_id) & (Order.courier == courier.id)
    return (
        Order.select()
        .where(mine & ((Order.external_ref == value) | (Order.public_id == value.upper())))
        .order_by(Order.id.desc())
        .first()
    )


def pick_up(rt: DispatchRuntime, courier: Courier, request: dict[str, Any]) -> dict[str, Any]:
    """POST /courier/orders/pick-up: every named order picked up, each its own move (transaction,
    audit entry, idempotency key ``key:orderId``) exactly as POST /courier/orders/{id}/status with
    picked_up would make it; one order's refusal leaves the others moved."""
    named: list[tuple[int | None, str | None]] = [(int(i), None) for i in request.get("orderIds", [])]
    for code in dict.fromkeys(request.get("codes", [])):  # a label scanned twice: one look-up
        found = _own_order_by_code(courier, code)
        named.append((found.id if found else None, code))
    if not named:
        raise BadRequest(
            "Name the orders to pick up: orderIds or codes.",
            errors=[{"field": "orderIds", "message": "required"}],
        )
    results: list[dict[str, Any]] = []
    seen: set[int] = set()
    picked = 0
    for order_id, code in named:
        if order_id is not None and order_id in seen:
            continue  # a parcel scanned twice, or named by id and by code: one move
        item: dict[str, Any] = {"orderId": None if order_id is None else str(order_id), "code": code}
        try:
            if order_id is None:
                raise NotFound("No such order.")
            seen.add(order_id)
            move: dict[str, Any] = {"status": "picked_up"}
            if request.get("idempotencyKey"):
                move["idempotencyKey"] = f"{request['idempotencyKey']}:{order_id}"
            if request.get("occurredAt") is not None:
                move["occurredAt"] = request["occurredAt"]
            answer = change_status(rt, courier, order_id, move)
            item.update(status=200, order=answer["order"], replayed=answer["replayed"], problem=None)
            picked += 1
        except ApiError as error:
            item.update(status=error.status, order=None, replayed=False, problem=problem_body(error))
        results.append(item)
    return {"results": results, "pickedUp": picked}


def report_refused(courier: Courier, order_id: int, report: dict[str, Any]) -> dict[str, Any]:
    """The app's queued move was refused for good (a wrong or locked code typed without signal, a
    move no longer allowed): flag the order "needs attention" with the reason and the cash the
    courier holds for it, so the dispatcher sees it; cleared when the order moves on. Reporting the
    same refusal again changes nothing (the app retries until it hears back)."""
    with write_transaction(database):
        order = own_active_order(courier, order_id, lock=True)
        if order.status not in ACTIVE:
            raise Conflict(f"The order is {order.status}: nothing waits on the courier's move.")
        held = report.get("heldAmountAmd")
        same = (order.attention_reason, order.attention_move, order.attention_held_amd) == (
            report["reason"],
            report["move"],
            held,
        )
        if order.attention_at is None or not same:
            order.attention_reason = report["reason"]
            order.attention_move = report["move"]
            order.attention_held_amd = held
            order.attention_at = clock.now()  # type: ignore[assignment]
            order.save()
            audit(
                order,
                "needs_attention",
                courier.user_id,
                courierId=str(courier.id),
                move=report["move"],
                reason=report["reason"],
                heldAmountAmd=held,
            )
            record_event(order.company_id, "order.updated", order_payload(order))
        return order_body(order)


def _apply_status(
    rt: DispatchRuntime, courier: Courier, order: Order, body: dict[str, Any]
) -> dict[str, Any]:
    status = body["status"]
    if status in ("delivered", "failed"):
        photo_key = body.get("photoKey")
        if photo_key is not None and not proof.is_issued_key(
            rt.objects, courier.company_id, order.id, "photo", photo_key
        ):
            raise Invalid(
                "photoKey was not issued for this order, or nothing was uploaded to it.",
                errors=[{"field": "photoKey", "message": "unknown or not uploaded"}],
            )
        signature_key = body.get("signatureKey")
        if signature_key is not None and not proof.is_issued_key(
            rt.objects, courier.company_id, order.id, "signature", signature_key
        ):
            raise Invalid(
                "signatureKey was not issued for this order, or nothing was uploaded to it.",
                errors=[{"field": "signatureKey", "message": "unknown or not uploaded"}],
            )
        order.proof_recipient_name = body.get("recipientName")
        order.proof_photo_key = photo_key
        order.proof_notes = body.get("notes")
        order.proof_signature_key = signature_key
        order.proof_scanned_code = body.get("scannedCode")
        order.proof_age_checked = body.get("ageChecked")
        order.proof_method = (
            "code"
            if needs_code_to_deliver(order) and status == "delivered"
            else ("photo" if photo_key else ("name" if body.get("recipientName") else None))
        )
    if status == "failed":
        order.failure_reason = body["failureReason"]
    collected = None
    if status == "delivered" and order.is_cod:
        collected = body.get("collectedAmountAmd")
        if collected is None:
            collected = order.cod_amount_amd
        order.collected_amount_amd = collected
    moment = moments.of_move(order.id, body.get("occurredAt"), clock.now())
    # The order's history names the proof the attempt carried (issue 47), so the dispatcher reads
    # it there too.
    notes = (
        {**moment.notes, "proofKinds": proof.recorded(order)}
        if status in ("delivered", "failed")
        else moment.notes
    )
    transition(
        order,
        status,
        courier.user_id,
        by="courier",
        reason=body.get("failureReason"),
        at=moment.at,
        courierId=str(courier.id),
        collectedAmountAmd=collected,
        **notes,
    )
    if collected:
        record_collection(courier, order, collected, at=moment.at)
    if status == "delivered":
        queue_sale(order, collected)  # the fiscal receipt's outbox row, in this transaction
    return {"order": order_body(order), "replayed": False}


def proof_upload_url(
    rt: DispatchRuntime,
    courier: Courier,
    order_id: int,
    content_type: str,
    content_length: int | None = None,
    kind: str = "photo",
) -> dict[str, Any]:
    """A presigned PUT for a proof photo, or (``kind`` signature) for the recipient's signature,
    which is a PNG kept apart (signatures/), so neither key can stand for the other."""
    own_active_order(courier, order_id)
    if kind == "signature" and content_type != "image/png":
        raise UnsupportedMediaType("A signature must be image/png.")
    if content_type not in IMAGE_TYPES:
        raise UnsupportedMediaType("Proof photos must be image/jpeg, image/png or image/webp.")
    folder = "signatures" if kind == "signature" else "proofs"
    store = rt.objects
    if content_length is not None and content_length > store.max_bytes:
        raise PayloadTooLarge(f"A proof photo may be at most {store.max_bytes} bytes.")
    try:
        probe = getattr(store, "probe", None)
        if probe is not None:
            probe()  # a link to a store that cannot take the photo would only fail later
        upload = store.presign_put(
            new_key(f"{courier.company_id}/{folder}/{order_id}", content_type), content_type, content_length
        )
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None
    return {"key": upload.key, "url": upload.url, "expiresIn": upload.expires_in}


def history(courier: Courier, limit: int) -> list[dict[str, Any]]:
    """Every delivered or failed attempt of this courier, newest first, from the audit trail (so a
    failed attempt stays in the history after the order is retried)."""
    rows = (
        OrderEvent.select(OrderEvent, Order)
        .join(Order)
        .where(
            (OrderEvent.company == courier.company_id)
            & ((OrderEvent.courier_id == courier.id) | (OrderEvent.actor == courier.user_id))
            & (OrderEvent.kind == "status_changed")
            & OrderEvent.to_status.in_(("delivered", "failed"))
        )
        .order_by(OrderEvent.id.desc())
        .limit(limit)
    )
    items = []
    for event in rows:
        data = json.loads(event.data)
        items.append(
            {
                "orderId": str(event.order.id),
                "publicId": event.order.public_id,
                "status": event.to_status,
                "at": clock.iso(event.created_at),
                "attempt": data.get("attempt"),
                "failureReason": data.get("reason"),
                "amountAmd": event.order.amount_amd,
                "collectedAmountAmd": data.get("collectedAmountAmd"),
                "addressLabelHy": event.order.address_hy,
                "fiscalNumber": event.order.fiscal_number if event.to_status == "delivered" else None,
            }
        )
    return items
