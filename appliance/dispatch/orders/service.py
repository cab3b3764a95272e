"""Order rules: pin-first drafts, edits while draft or ready, listing by Asia/Yerevan working day,
assignment (one order or a whole plan, atomically) and dispatcher status moves."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.compiled import insert_new
from appliance.common.db import locked, savepoint, write_transaction
from appliance.common.problems import BadRequest, Conflict, Invalid, NotFound
from appliance.dispatch import audit as company_audit
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.fees import service as fees
from appliance.dispatch.integrations.outbox import announce
from appliance.dispatch.models import (
    Assignment,
    Courier,
    IntegrationKey,
    Membership,
    Order,
    OrderEvent,
    User,
)
from appliance.dispatch.orders import codes, ids, proof
from appliance.dispatch.orders.serializers import DOOR_PARTS, assignment_body, order_body
from appliance.dispatch.orders.state import ACTIVE, FINAL, audit, cancel_assignment, order_payload, transition
from appliance.dispatch.statements import service as statements

FAILURE_CODES = frozenset({"recipient_absent", "refused", "wrong_address", "other"})

PUBLIC_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L


def new_public_id() -> str:
    return "".join(secrets.choice(PUBLIC_ALPHABET) for _ in range(10))


def own_order(company_id: int, order_id: int, *, lock: bool = False) -> Order:
    ids.require(order_id, "order")
    query = Order.select().where((Order.id == order_id) & (Order.company == company_id))
    order = (locked(query) if lock else query).first()
    if order is None:
        raise NotFound("No such order.")
    return order


def _check_window(start: datetime | None, end: datetime | None) -> None:
    if start is not None and end is not None and end <= start:
        raise Invalid(
            "deliveryWindowEnd must be after deliveryWindowStart.",
            errors=[{"field": "deliveryWindowEnd", "message": "must be after the start"}],
        )


def _set_code(order: Order, master_key: bytes) -> None:
    code = codes.new_code()
    order.otp_hash = codes.code_hash(master_key, order.public_id, code)
    order.otp_cipher = codes.encrypt_code(master_key, order.public_id, code)
    order.otp_attempts = 0


def create_order(
    company_id: int,
    actor_id: int | None,
    fields: dict[str, Any],
    master_key: bytes,
    *,
    ready: bool = False,
    router: Any = None,
    shop_key_id: int | None = None,
) -> dict[str, Any]:
    """POST /orders: one draft in its own transaction (``ready``: made ready in the same one, for a
    shop's key when its company opted in). Its delivery fee is worked out first, from the company's
    fee zones with ``router``'s road distance (fees/service.py), outside the write transaction;
    ``shop_key_id``: the integration key that sent it, or the shop a dispatcher named (its
    statements, its proof download, and its proof default when the order names none)."""
    check_order(fields)
    if shop_key_id is None:  # a dispatcher's order for a shop (a key's own orders are its own)
        shop_key_id = statements.shop_of(company_id, fields.get("shopId"))
    fee = fees.quote(company_id, fields, router) if router is not None else None
    with write_transaction(database):
        default = key_proof_default(company_id, shop_key_id)
        if default is not None and fields.get("proofRequired") is None:
            fields = {**fields, "proofRequired": default}
        order = insert_order(
            company_id, actor_id, fields, master_key, delivery_fee=fee, shop_key_id=shop_key_id
        )
        if ready:
            transition(order, "ready", actor_id, by="dispatcher", reason="arrived ready")
        return order_body(order)


def key_proof_default(company_id: int, key_id: int | None) -> list[str] | None:
    """The proof kinds an integration key gives the orders it sends that name none (None: the
    key sets none, or no key sent them)."""
    if key_id is None:
        return None
    key = IntegrationKey.get_or_none((IntegrationKey.id == key_id) & (IntegrationKey.company == company_id))
    return None if key is None or key.proof_required is None else proof.kinds_of(key.proof_required)


def check_order(fields: dict[str, Any]) -> None:
    """The rules of a new order beyond its schema (the import applies the same ones)."""
    _check_window(fields.get("deliveryWindowStart"), fields.get("deliveryWindowEnd"))


def external_ref_taken(ref: str) -> Conflict:
    return Conflict(
        f"The company already has an order with externalRef {ref!r}.",
        code="external_ref_taken",
        errors=[{"field": "externalRef", "message": "already used by another order"}],
    )


def _save_new(order: Order) -> None:
    """Insert under a savepoint, so that a taken externalRef (the partial unique index of migration
    0010) fails this order alone and leaves the caller's transaction usable (PostgreSQL aborts a
    transaction on any failed statement otherwise)."""
    try:
        with savepoint(database):
            insert_new(order)  # the INSERT's text built once: an import writes thousands
    except peewee.IntegrityError:
        if (
            order.external_ref
            and Order.select()
            .where((Order.company == order.company_id) & (Order.external_ref == order.external_ref))
            .exists()
        ):
            raise external_ref_taken(order.external_ref) from None
        raise


def item_json(items: list[Any] | None) -> str | None:
    """The fiscal receipt's lines as the order keeps them (fiscal/service.receipt_request)."""
    if not items:
        return None
    lines = [item if isinstance(item, dict) else item.model_dump() for item in items]  # PATCH keeps models
    kept = [{k: v for k, v in line.items() if v is not None} for line in lines]
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"))


def _set_details(order: Order, details: dict[str, Any] | None) -> None:
    for name, column in DOOR_PARTS.items():
        setattr(order, column, (details or {}).get(name))


def insert_order(
    company_id: int,
    actor_id: int | None,
    fields: dict[str, Any],
    master_key: bytes,
    *,
    pin_needed: str | None = None,
    company_proof: list[str] | None = None,
    delivery_fee: int | None = None,
    shop_key_id: int | None = None,
) -> Order:
    """A new draft inside the caller's write transaction (POST /orders and every imported row);
    ``fields`` is a validated OrderCreate, dumped, already through check_order. ``pin_needed``:
    an imported row whose address could not be placed (its pin a stand-in), and why.
    ``company_proof``: the company's proof set, read once by an import for all its rows."""
    cod_amount = fields.get("codAmountAmd")
    if cod_amount is None:
        cod_amount = fields.get("amountAmd", 0) if fields.get("isCod") else 0
    moment = clock.now()
    order = Order(
        company=company_id,
        public_id=new_public_id(),
        status="draft",
        recipient_name=fields["recipientName"],
        recipient_phone=fields["recipientPhone"],
        amount_amd=fields.get("amountAmd", 0),
        otp_required=fields.get("otpRequired", False),
        is_cod=fields.get("isCod", False),
        cod_amount_amd=cod_amount,
        weight_kg=fields.get("weightKg"),
        window_start=fields.get("deliveryWindowStart"),
        window_end=fields.get("deliveryWindowEnd"),
        address_hy=fields["addressLabelHy"],
        address_en=fields.get("addressLabelEn"),
        address_ru=fields.get("addressLabelRu"),
        lat=fields["pin"]["lat"],
        lon=fields["pin"]["lon"],
        external_ref=fields.get("externalRef"),
        note_to_courier=fields.get("noteToCourier"),
        recipient_language=fields.get("recipientLanguage"),
        recipient_email=fields.get("recipientEmail"),
        fiscal_items=item_json(fields.get("items")),
        partner_tin=fields.get("partnerTin"),
        otp_hash=None,
        otp_cipher=None,
        pin_needed=pin_needed,
        proof_required=proof.stored(fields.get("proofRequired")),
        delivery_fee_amd=delivery_fee,
        shop_key_id=shop_key_id,
        created_at=moment,
        updated_at=moment,
    )
    own = order.proof_required is not None
    in_force = proof.required(order) if company_proof is None or own else company_proof
    if not order.otp_required and "code" in in_force:
        order.otp_required = True  # its set (or the company's) needs a delivery code: it gets one
    _set_details(order, fields.get("addressDetails"))
    if order.otp_required:
        _set_code(order, master_key)
    _save_new(order)
    audit(order, "created", actor_id, to_status="draft")
    record_event(company_id, "order.created", order_payload(order))
    announce(order, "order.created")
    return order


_EDITABLE = {
    "recipientName": "recipient_name",
    "recipientPhone": "recipient_phone",
    "amountAmd": "amount_amd",
    "isCod": "is_cod",
    "codAmountAmd": "cod_amount_amd",
    "weightKg": "weight_kg",
    "deliveryWindowStart": "window_start",
    "deliveryWindowEnd": "window_end",
    "addressLabelHy": "address_hy",
    "addressLabelEn": "address_en",
    "addressLabelRu": "address_ru",
    "externalRef": "external_ref",
    "noteToCourier": "note_to_courier",
    "recipientLanguage": "recipient_language",
    "recipientEmail": "recipient_email",
    "partnerTin": "partner_tin",
}
_REQUIRED = {"recipientName", "recipientPhone", "addressLabelHy", "pin", "amountAmd", "isCod", "otpRequired"}


# What the fee depends on (fees/service.py): an edit of any of them prices the order again.
_PRICED = frozenset({"pin", "weightKg", "isCod", "codAmountAmd", "amountAmd"})


def _requote(company_id: int, order_id: int, changes: dict[str, Any], router: Any) -> int | None:
    """The fee of the order as the edit leaves it, asked before the write transaction (the road
    engine never holds the write lock); the edit itself re-reads the order under its lock."""
    order = own_order(company_id, order_id)
    fields = {
        "pin": changes.get("pin") or {"lat": order.lat, "lon": order.lon},
        "weightKg": changes.get("weightKg", order.weight_kg),
        "isCod": changes.get("isCod", order.is_cod),
        "codAmountAmd": changes.get("codAmountAmd", order.cod_amount_amd),
        "amountAmd": changes.get("amountAmd", order.amount_amd),
    }
    if fields["isCod"] and "isCod" in changes and "codAmountAmd" not in changes:
        fields["codAmountAmd"] = None  # the amount stands in for the cash, as the edit below does
    return fees.quote(company_id, fields, router)


def update_order(
    company_id: int,
    order_id: int,
    actor_id: int,
    changes: dict[str, Any],
    master_key: bytes,
    *,
    router: Any = None,
) -> dict[str, Any]:
    """PATCH /orders/{id}. With ``router``, an edit of what the delivery fee depends on (pin,
    weight, cash) prices the order again, unless it sets deliveryFeeAmd itself (docs/fees.md)."""
    for field in _REQUIRED:
        if field in changes and changes[field] is None:
            raise BadRequest(
                f"{field} cannot be null.", errors=[{"field": field, "message": "must not be null"}]
            )
    if router is not None and "deliveryFeeAmd" not in changes and _PRICED & set(changes):
        changes = {**changes, "deliveryFeeAmd": _requote(company_id, order_id, changes, router)}
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        fee_only = set(changes) == {"deliveryFeeAmd"}  # a fee alone may change in any status
        if not fee_only and order.status not in {"draft", "ready"}:
            raise Conflict("Only draft and ready orders can be edited.")
        if "deliveryFeeAmd" in changes:
            _change_fee(order, changes["deliveryFeeAmd"], actor_id)
            if fee_only:
                return order_body(order)
        for field, column in _EDITABLE.items():
            if field in changes:
                setattr(order, column, changes[field])
        if "pin" in changes:
            order.lat, order.lon = changes["pin"]["lat"], changes["pin"]["lon"]
            order.pin_needed = None  # the dispatcher dropped the real pin (an imported draft's)
        if "addressDetails" in changes:
            _set_details(order, changes["addressDetails"])
        if "shopId" in changes:
            shop = statements.shop_of(company_id, changes["shopId"])
            if shop != order.shop_key_id:
                company_audit.record(
                    "order.shop_changed",
                    f"order:{order.id}",
                    company_id=company_id,
                    before={"shopId": order.shop_key_id},
                    after={"shopId": shop},
                )
                order.shop_key_id = shop
        if "items" in changes:
            order.fiscal_items = item_json(changes["items"])
        if "isCod" in changes and changes["isCod"] and "codAmountAmd" not in changes:
            order.cod_amount_amd = order.amount_amd
        if "proofRequired" in changes:
            order.proof_required = proof.stored(changes["proofRequired"])
        if "code" in proof.kinds_of(order.proof_required):
            changes = {**changes, "otpRequired": True}  # the order's own set needs its code
        if "otpRequired" in changes:
            if changes["otpRequired"] and not order.otp_required:
                _set_code(order, master_key)
            order.otp_required = changes["otpRequired"]
        _check_window(order.window_start, order.window_end)
        order.updated_at = clock.now()  # type: ignore[assignment]
        _save_changed(order)
        audit(order, "updated", actor_id, fields=sorted(changes))
        record_event(company_id, "order.updated", order_payload(order))
        return order_body(order)


def _change_fee(order: Order, fee: int | None, actor_id: int) -> None:
    """A dispatcher's delivery fee (None clears it), in any status until the shop's statement that
    holds the order is paid; audited (the audit log and the order's trail) with both amounts."""
    if fee == order.delivery_fee_amd:
        return
    if order.status == "cancelled":
        raise Conflict("A cancelled order has no delivery fee to change.")
    if statements.fee_is_paid(order):
        raise Conflict(
            "The order is on a shop statement already paid: its delivery fee cannot change.", code="fee_paid"
        )
    before, moment = order.delivery_fee_amd, clock.now()
    Order.update(delivery_fee_amd=fee, updated_at=moment).where(Order.id == order.id).execute()
    order.delivery_fee_amd, order.updated_at = fee, moment  # type: ignore[assignment]
    change = {"deliveryFeeAmd": fee}
    company_audit.record(
        "order.fee_changed",
        f"order:{order.id}",
        company_id=order.company_id,
        before={"deliveryFeeAmd": before},
        after=change,
    )
    audit(order, "fee_changed", actor_id, before=before, after=fee)
    record_event(order.company_id, "order.updated", order_payload(order))


def _save_changed(order: Order) -> None:
    """Save an edit; a taken externalRef is 409 external_ref_taken (the whole edit is refused)."""
    try:
        with savepoint(database):
            order.save()
    except peewee.IntegrityError:
        if order.external_ref:
            raise external_ref_taken(order.external_ref) from None
        raise


def order_detail(company_id: int, order_id: int) -> dict[str, Any]:
    return order_body(own_order(company_id, order_id))


def order_events(company_id: int, order_id: int) -> list[dict[str, Any]]:
    """The order's audit trail, each step with who made it: the person's name and role in the
    company (owner, dispatcher, courier; null actor: the system), and for a delivery recorded by a
    dispatcher on a courier's behalf, that courier."""
    own_order(company_id, order_id)
    rows = list(
        OrderEvent.select()
        .where((OrderEvent.order == order_id) & (OrderEvent.company == company_id))
        .order_by(OrderEvent.id)
    )
    actors = {e.actor_id for e in rows if e.actor_id}
    names = {u.id: u.display_name for u in User.select(User.id, User.display_name).where(User.id.in_(actors))}
    # A courier is named as the company knows them (their profile here), not by their account.
    names.update(
        (c.user_id, c.display_name)
        for c in Courier.select(Courier.user, Courier.display_name).where(
            (Courier.company == company_id) & Courier.user.in_(actors)
        )
    )
    roles = {
        m.user_id: m.role
        for m in Membership.select(Membership.user, Membership.role).where(
            (Membership.company == company_id) & Membership.user.in_(actors)
        )
    }
    events = []
    for e in rows:
        data = json.loads(e.data)
        behalf = None
        if data.get("onBehalfOfCourier") and data.get("courierId"):
            courier = Courier.get_or_none(
                (Courier.id == int(data["courierId"])) & (Courier.company == company_id)
            )
            behalf = {"courierId": data["courierId"], "name": courier.display_name if courier else ""}
        events.append(
            {
                "id": str(e.id),
                "kind": e.kind,
                "fromStatus": e.from_status,
                "toStatus": e.to_status,
                "actorUserId": str(e.actor_id) if e.actor_id else None,
                "actorName": names.get(e.actor_id) if e.actor_id else None,
                "actorRole": roles.get(e.actor_id) if e.actor_id else None,
                "onBehalfOf": behalf,
                "data": data,
                "createdAt": clock.iso(e.created_at),
            }
        )
    return events


# -- assignment -------------------------------------------------------------------------------------


def _assign_one(order: Order, courier_id: int, sequence: int | None, actor_id: int | None) -> Assignment:
    if order.status == "assigned":
        cancel_assignment(order, actor_id)
    transition(order, "assigned", actor_id, by="assignment", courierId=str(courier_id))
    order.courier = courier_id
    order.sequence = sequence
    order.save()
    row = Assignment.create(
        order=order.id, courier=courier_id, sequence=sequence, status="active", created_at=clock.now()
    )
    audit(order, "assigned", actor_id, courierId=str(courier_id), sequence=sequence)
    announce(order, "order.assigned")  # here, not in transition(): the courier is set now
    record_event(
        order.company_id,
        "assignment.created",
        {
            "orderId": str(order.id),
            "courierId": str(courier_id),
            "sequence": sequence,
            "assignmentId": str(row.id),
        },
    )
    return row


def _active_courier(company_id: int, courier_id: int) -> Courier:
    ids.require(courier_id, "courier")
    courier = Courier.get_or_none((Courier.id == courier_id) & (Courier.company == company_id))
    if courier is None:
        raise NotFound("No such courier.")
    return courier


def next_sequence(courier_id: int, *, besides: int | None = None) -> int:
    """The sequence after the courier's last open stop (1 for a courier with none)."""
    query = Order.select(peewee.fn.MAX(Order.sequence)).where(
        (Order.courier == courier_id) & Order.status.in_(tuple(ACTIVE))
    )
    if besides is not None:
        query = query.where(Order.id != besides)
    return (query.scalar() or 0) + 1


def assign(company_id: int, order_id: int, courier_id: int, actor_id: int) -> dict[str, Any]:
    """Assign by hand: the order becomes the courier's last stop (after their open ones)."""
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        courier = _active_courier(company_id, courier_id)
        if not courier.active:
            raise NotFound("The courier is not active.")  # as POST /plans/apply: 404
        if order.status not in {"ready", "assigned"}:
            raise Conflict(f"An order in status {order.status} cannot be assigned.")
        if order.status == "assigned" and order.courier_id == courier_id:
            raise Conflict("The order is already assigned to this courier.")
        row = _assign_one(order, courier_id, next_sequence(courier_id, besides=order.id), actor_id)
        return {"assignment": assignment_body(row), "order": order_body(order)}


def assign_orders(
    company_id: int, stops: Sequence[tuple[int, int, int]], actor_id: int | None
) -> list[dict[str, Any]]:
    """Assign every (order_id, courier_id, sequence) at once or nothing (plan application).

    404 for an order or courier this company does not have, or an inactive courier; 409 when any
    order is no longer ready or assigned (a stale plan). Orders already assigned to the same
    courier are re-sequenced without a new assignment."""
    with write_transaction(database):
        order_ids = [o for o, _, _ in stops]
        ids.require_all(order_ids, "order")
        ids.require_all((c for _, c, _ in stops), "courier")
        orders = {
            o.id: o
            for o in locked(Order.select().where((Order.company == company_id) & Order.id.in_(order_ids)))
        }
        if len(orders) != len(set(order_ids)):
            raise NotFound("Some orders of the plan do not exist.")
        couriers = {
            c.id: c
            for c in Courier.select().where(
                (Courier.company == company_id) & Courier.id.in_({c for _, c, _ in stops})
            )
        }
        if any(c not in couriers or not couriers[c].active for _, c, _ in stops):
            raise NotFound("A courier of the plan is unknown or inactive.")
        stale = [str(orders[o].id) for o, _, _ in stops if orders[o].status not in {"ready", "assigned"}]
        if stale:
            raise Conflict(
                "The plan is stale: some orders are no longer assignable.",
                errors=[{"field": "orderId", "message": f"order {o} is not assignable"} for o in stale],
            )
        # A plan applied after a courier's existing stops continues their numbering: its 1..n
        # follow the highest sequence among the courier's open orders outside the plan.
        offset = {
            row.courier_id: row.top or 0
            for row in Order.select(Order.courier, peewee.fn.MAX(Order.sequence).alias("top"))
            .where(
                Order.courier.in_({c for _, c, _ in stops})
                & Order.status.in_(tuple(ACTIVE))
                & Order.id.not_in(order_ids)
            )
            .group_by(Order.courier)
        }
        results = []
        for order_id, courier_id, planned in stops:
            sequence = offset.get(courier_id, 0) + planned
            order = orders[order_id]
            if order.status == "assigned" and order.courier_id == courier_id:
                order.sequence = sequence
                order.save()
                Assignment.update(sequence=sequence).where(
                    (Assignment.order == order.id) & (Assignment.status == "active")
                ).execute()
                audit(order, "resequenced", actor_id, courierId=str(courier_id), sequence=sequence)
            else:
                _assign_one(order, courier_id, sequence, actor_id)
            results.append({"orderId": str(order_id), "courierId": str(courier_id), "sequence": sequence})
        return results


def change_status(
    company_id: int, order_id: int, actor_id: int, status: str, reason: str | None, master_key: bytes
) -> dict[str, Any]:
    """A dispatcher's move. Failing takes an optional reason: one of the failure codes is recorded as
    the order's failureReason; any other text is kept as given in the audit trail (failureReason
    other). A retry (failed → ready) is a new attempt with a fresh delivery code and attempt budget."""
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        previous = order.status
        if status == "failed":
            order.failure_reason = (reason if reason in FAILURE_CODES else "other") if reason else None
        transition(order, status, actor_id, by="dispatcher", reason=reason)
        if previous == "failed" and status == "ready" and order.otp_required:
            _set_code(order, master_key)
            order.save()
        return order_body(order)


def reset_delivery_code(company_id: int, order_id: int, actor_id: int, master_key: bytes) -> dict[str, Any]:
    """A new delivery code and attempt budget for an order that requires one (a locked code, or a
    recipient who lost it); the tracking page shows the new code."""
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        if not order.otp_required:
            raise Conflict("This order does not require a delivery code.")
        if order.status in FINAL:
            raise Conflict(f"The order is {order.status}: its delivery code is no longer used.")
        _set_code(order, master_key)
        order.updated_at = clock.now()  # type: ignore[assignment]
        order.save()
        audit(order, "delivery_code_reset", actor_id)
        return order_body(order)


def open_orders_of(courier_ids: Iterable[int]) -> peewee.SelectQuery:
    return Order.select().where(Order.courier.in_(list(courier_ids)) & Order.status.in_(tuple(ACTIVE)))
